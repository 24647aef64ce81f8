// Writes <file>.br (brotli, quality 11) and <file>.gz (gzip, level 9) beside each file named on the command
// line, for the server to send as they are (tower-http ServeDir, precompressed_br / precompressed_gzip).
// Node's own zlib: nothing to install. Prints one line per file: name, raw, gzip and brotli bytes.
import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';

for (const file of process.argv.slice(2)) {
  const raw = readFileSync(file);
  const br = brotliCompressSync(raw, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
      [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
      [constants.BROTLI_PARAM_MODE]: file.endsWith('.wasm') ? constants.BROTLI_MODE_GENERIC : constants.BROTLI_MODE_TEXT,
    },
  });
  const gz = gzipSync(raw, { level: 9 });
  writeFileSync(`${file}.br`, br);
  writeFileSync(`${file}.gz`, gz);
  console.log(`${basename(file)}\traw ${raw.length}\tgzip ${gz.length}\tbrotli ${br.length}`);
}
