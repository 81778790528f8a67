"""Running the main job: run files checked whole, the plan of notebooks, papermill, report folders."""
