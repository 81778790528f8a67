"""The ground floor: errors, paths and the outputs' layout, atomic files, names, frame keys,
provenance, the lock, parallel workers, the notebooks' names."""
