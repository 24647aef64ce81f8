//! `docnum-wasm-split <input.wasm> <out-dir> <main-out.wasm>`: the split step of `scripts/lib.sh`'s `build_site`.
//!
//! wasm-split's own command line writes no manifest; Leptos' `HydrationScripts` reads
//! `__wasm_split_manifest.json` to preload the chunks of the page being rendered, so this writes one, as
//! cargo-leptos' `--split` does (the same link name, so Leptos finds the loader).

use std::path::Path;
use std::process::ExitCode;

const LINK_NAME: &str = "./__wasm_split.______________________.js";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, out_dir, main_out] = args.as_slice() else {
        eprintln!("usage: docnum-wasm-split <input.wasm> <out-dir> <main-out.wasm>");
        return ExitCode::from(2);
    };
    match split(Path::new(input), Path::new(out_dir), Path::new(main_out)) {
        Ok(chunks) => {
            eprintln!("    split into the main module and {chunks} chunk files");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("wasm-split failed: {e:?}");
            ExitCode::FAILURE
        }
    }
}

fn split(input: &Path, out_dir: &Path, main_out: &Path) -> Result<usize, Box<dyn std::error::Error>> {
    let wasm = std::fs::read(input)?;
    std::fs::create_dir_all(out_dir)?;
    let split = wasm_split_cli_support::transform({
        let mut opts = wasm_split_cli_support::Options::new(&wasm);
        opts.output_dir = out_dir;
        opts.main_out_path = main_out;
        opts.main_module = "./docnum.js";
        opts.link_name = LINK_NAME;
        opts
    })
    .map_err(|e| format!("{e:?}"))?;
    std::fs::write(out_dir.join("__wasm_split_manifest.json"), serde_json::to_string_pretty(&split.prefetch_map)?)?;
    Ok(split.split_modules.len())
}
