// `wasm-opt -Oz` over every module of a folder, in one process: `node wasm-opt-all.mjs BINARYEN_DIR FOLDER`.
// The split bundle has about 400 modules, most of them small; the npm wasm-opt is a 10 MB script that node loads
// again for each one (about 1.8 s of CPU each on this project's CI machine). Here binaryen loads once and runs the
// same default passes at the same levels (optimize 2, shrink 2) on each module, in place. Prints the bytes before and
// after.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [binaryenDir, folder] = process.argv.slice(2);
if (!binaryenDir || !folder) {
  console.error('usage: node wasm-opt-all.mjs BINARYEN_DIR FOLDER');
  process.exit(2);
}
const binaryen = (await import(pathToFileURL(join(binaryenDir, 'node_modules/binaryen/index.js')).href)).default;

binaryen.setOptimizeLevel(2);
binaryen.setShrinkLevel(2);
binaryen.setDebugInfo(false);

let before = 0;
let after = 0;
for (const name of readdirSync(folder).filter((n) => n.endsWith('.wasm')).sort()) {
  const path = join(folder, name);
  const bytes = readFileSync(path);
  // binaryen reads a module with its default features on, those wasm-opt uses
  const module = binaryen.readBinary(bytes);
  if (!module.validate()) {
    console.error(`${name}: not valid before optimising`);
    process.exit(1);
  }
  module.optimize();
  const out = module.emitBinary();
  module.dispose();
  writeFileSync(path, out);
  before += bytes.length;
  after += out.length;
}
console.log(`wasm-opt -Oz, one process: ${before} bytes before, ${after} after`);
