"""The case browser's style sheet (browser_page.py), kept apart from the page's script."""

STYLE = """<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em auto;max-width:78em;padding:0 1em;color:#222}
h1{font-size:1.5em;margin-bottom:.2em} .sub{color:#666;margin-top:0}
fieldset{border:1px solid #ccc;border-radius:6px;margin:0 0 1em;padding:.6em 1em;display:flex;flex-wrap:wrap;gap:.8em 1.4em}
label{font-size:.9em;color:#444} select,input{font-size:.95em;margin-left:.3em}
table{border-collapse:collapse;width:100%;font-size:.9em} th,td{border-bottom:1px solid #e3e3e3;padding:.45em .5em;vertical-align:top;text-align:left}
th{background:#f4f6f8;position:sticky;top:0} td.mono,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em;white-space:pre-wrap;margin:0}
mark{background:#ffe58a;border-radius:3px;padding:0 2px} mark sup{color:#8a5a00;font-size:.7em}
.ok{color:#1a7f37;font-weight:600} .bad{color:#c62828;font-weight:600} .warn{color:#9a6700}
.flag{display:inline-block;background:#eef;border-radius:3px;padding:0 4px;margin:1px;font-size:.8em}
details summary{cursor:pointer;color:#0550ae} #pager{margin:.8em 0;display:flex;gap:.6em;align-items:center}
#errors{color:#c62828} .muted{color:#777;font-size:.85em} .judge{font-weight:400;font-size:.85em} #compare table{margin-bottom:1em}
</style>
"""
