// Rewrites Skybridge manifests between gateway.skybridge.dev/v1alpha1 and v1beta1, keeping comments
// and every other document as it is (docs/kubernetes.md, "Migrating to v1beta1"):
//   node scripts/convert-manifests.ts [--to v1beta1|v1alpha1] [--in-place] FILE...   (or stdin -> stdout)
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { convertManifests } from '../operator/src/conversion/manifests.ts';

const { values, positionals } = parseArgs({ options: { to: { type: 'string', default: 'v1beta1' }, 'in-place': { type: 'boolean', default: false } }, allowPositionals: true });
const to = values.to;
if (to !== 'v1beta1' && to !== 'v1alpha1') {
  process.stderr.write(`--to must be v1beta1 or v1alpha1, got '${to}'\n`);
  process.exit(2);
}
try {
  if (!positionals.length) process.stdout.write(convertManifests(readFileSync(0, 'utf8'), to).text);
  for (const file of positionals) {
    const { text, converted } = convertManifests(readFileSync(file, 'utf8'), to);
    if (values['in-place']) {
      writeFileSync(file, text);
      process.stderr.write(`${file}: ${converted.length ? converted.join(', ') : 'nothing to convert'}\n`);
    } else process.stdout.write(text);
  }
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
}
