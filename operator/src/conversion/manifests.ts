// Rewrites YAML manifests from one served version to the other, keeping comments, order and
// everything that is not a Skybridge resource: the migration tool (scripts/convert-manifests.ts)
// for manifests kept in Git. Pure: text in, text out. Field names follow the same shapes as the
// webhook's conversion (convert.ts), so both give the same objects.
import { isMap, isScalar, isSeq, parseAllDocuments, type Document } from 'yaml';
import { GROUP, type ApiVersionName } from '../resources/kinds.ts';
import { ConversionError, isKind, specShape, versionOf } from './convert.ts';
import type { ObjectShape, Shape } from './shape.ts';

export interface ManifestConversion {
  text: string;
  /** `Kind name` of each resource rewritten. */
  converted: string[];
}

export function convertManifests(text: string, to: ApiVersionName): ManifestConversion {
  const docs = parseAllDocuments(text);
  const converted: string[] = [];
  const out: string[] = [];
  for (const [i, doc] of (Array.isArray(docs) ? docs : []).entries()) {
    if (doc.errors.length) throw new Error(`document ${i + 1}: ${doc.errors[0].message}`);
    const from = versionOf(doc.get('apiVersion'));
    const kind = doc.get('kind');
    if (from && from !== to && isKind(kind)) {
      const name = String(doc.getIn(['metadata', 'name']) ?? `#${i + 1}`);
      try {
        const spec = doc.get('spec', true);
        if (spec !== undefined) rename(spec, specShape(kind) as Shape, from, 'spec');
      } catch (err) {
        if (err instanceof ConversionError) throw new Error(`${kind} ${name}: ${err.message}`);
        throw err;
      }
      doc.set('apiVersion', `${GROUP}/${to}`);
      converted.push(`${kind} ${name}`);
    }
    out.push(render(doc, i));
  }
  return { text: out.join(''), converted };
}

/** A document as text (with its `---` marker when it had one), separated from the one before. */
function render(doc: Document.Parsed, i: number): string {
  const text = doc.toString({ lineWidth: 0, flowCollectionPadding: false });
  return i > 0 && !text.startsWith('---') ? `---\n${text}` : text;
}

function rename(node: unknown, shape: Shape, from: ApiVersionName, path: string): void {
  if (node === null || node === undefined || isScalar(node)) return;
  const side = from === 'v1alpha1' ? 'alpha' : 'beta';
  if (shape.type === 'object' || (shape.type === 'union' && isMap(node) && shape.object)) {
    const obj = (shape.type === 'object' ? shape : shape.object) as ObjectShape;
    if (!isMap(node)) throw new ConversionError(path, 'must be an object');
    const fields = side === 'alpha' ? obj.alpha : obj.beta;
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const field = fields.get(key);
      if (!field) {
        if (obj.open) continue;
        throw new ConversionError(`${path}.${key}`, `unknown field (${from} has no such field here)`);
      }
      if (isScalar(pair.key)) pair.key.value = field.name;
      rename(pair.value, field.shape, from, `${path}.${key}`);
    }
  } else if (shape.type === 'list' || (shape.type === 'union' && isSeq(node) && shape.list)) {
    const list = shape.type === 'list' ? shape : shape.list;
    if (!isSeq(node) || !list) throw new ConversionError(path, 'must be a list');
    node.items.forEach((item, i) => rename(item, list.items, from, `${path}[${i}]`));
  } else if (shape.type === 'map') {
    if (!isMap(node)) throw new ConversionError(path, 'must be an object (a map)');
    for (const pair of node.items) rename(pair.value, shape.values, from, `${path}.${isScalar(pair.key) ? String(pair.key.value) : String(pair.key)}`);
  }
}
