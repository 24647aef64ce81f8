#!/usr/bin/env python3
"""What each page of the production bundle costs a browser with an empty cache, in bytes of brotli (the .br files the
build wrote): the reserve page its staff script and the stylesheet; the login page the stylesheet; every other page
the Leptos bundle's main module, its script, the chunks' loader and the stylesheet, plus the page's own chunks as
`__wasm_split_manifest.json` lists them. Usage: scripts/bundle-sizes.py [target/site/pkg/<hash>]"""
import glob, json, os, sys

pkg = sys.argv[1] if len(sys.argv) > 1 else sorted(glob.glob("target/site/pkg/*/"), key=os.path.getmtime)[-1]
br = lambda name: os.path.getsize(os.path.join(pkg, name + ".br"))
first = ["docnum_bg.wasm", "docnum.js", "__wasm_split.______________________.js", "docnum.css"]
base = sum(br(f) for f in first)
manifest = json.load(open(os.path.join(pkg, "__wasm_split_manifest.json")))
staff = ["staff_bg.wasm", "staff.js", "docnum.css"]
print(f"| page | files | brotli bytes |\n| --- | --- | --- |")
print(f"| `/` (the staff script: module, script; stylesheet) | {len(staff)} | {sum(br(f) for f in staff):,} |")
print(f"| `/login` (stylesheet) | 1 | {br('docnum.css'):,} |")
for split, stems in sorted(manifest.items()):
    page = split.removeprefix("__").split("_route_view")[0]
    if page in ("reserve", "login"):
        continue  # never loaded first: the pages above load no Leptos bundle
    extra = sum(br(s + ".wasm") for s in stems)
    print(f"| `/{page}` | {len(first) + len(stems)} | {base + extra:,} (+{extra:,} in {len(stems)} chunks) |")
