#!/usr/bin/env node
/**
 * Summarises a V8 .heapsnapshot (e.g. from `bench/memory-idle.mjs --snapshot DIR`): the self size
 * of the live heap by node type and constructor, and the module source text V8 keeps, by package
 * (each loaded module's Script holds its source as a string).
 *
 *   node bench/heap-summary.mjs FILE.heapsnapshot [TOP=20]
 */
import { readFileSync } from 'node:fs';

const snapshot = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const top = Number(process.argv[3] ?? 20);
const meta = snapshot.snapshot.meta;
const NODE_FIELDS = meta.node_fields.length;
const EDGE_FIELDS = meta.edge_fields.length;
const nodeTypes = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const TYPE = meta.node_fields.indexOf('type');
const NAME = meta.node_fields.indexOf('name');
const SELF_SIZE = meta.node_fields.indexOf('self_size');
const EDGE_COUNT = meta.node_fields.indexOf('edge_count');
const EDGE_TYPE = meta.edge_fields.indexOf('type');
const EDGE_NAME = meta.edge_fields.indexOf('name_or_index');
const EDGE_TO = meta.edge_fields.indexOf('to_node');
const { nodes, edges, strings } = snapshot;
const count = nodes.length / NODE_FIELDS;

const byConstructor = new Map();
const bySourcePackage = new Map();
let total = 0;
let edge = 0;
for (let i = 0; i < count; i += 1) {
  const base = i * NODE_FIELDS;
  const type = nodeTypes[nodes[base + TYPE]];
  const name = strings[nodes[base + NAME]];
  const size = nodes[base + SELF_SIZE];
  const edgeCount = nodes[base + EDGE_COUNT];
  total += size;
  const key = /string/.test(type) ? '(strings)' : type === 'object' ? name : `(${type}) ${name.slice(0, 40)}`;
  byConstructor.set(key, (byConstructor.get(key) ?? 0) + size);
  // A Script: a `code` node named by its file, with an internal `source` edge to its text.
  if (type === 'code' && /^(\/|file:|node:)/.test(name)) {
    for (let e = edge; e < edge + edgeCount * EDGE_FIELDS; e += EDGE_FIELDS) {
      if (edgeTypes[edges[e + EDGE_TYPE]] === 'internal' && strings[edges[e + EDGE_NAME]] === 'source') {
        const pkg = packageOf(name);
        bySourcePackage.set(pkg, (bySourcePackage.get(pkg) ?? 0) + nodes[edges[e + EDGE_TO] + SELF_SIZE]);
      }
    }
  }
  edge += edgeCount * EDGE_FIELDS;
}

function packageOf(file) {
  if (file.startsWith('node:')) return 'node: (built-in)';
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = file.slice(nm + 14).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const workspace = /\/packages\/([^/]+)\//.exec(file);
  return workspace ? `@trellis/${workspace[1]}` : file;
}

const mb = (bytes) => (bytes / 1024 / 1024).toFixed(2).padStart(7);
const sources = [...bySourcePackage.values()].reduce((a, b) => a + b, 0);
console.log(`live heap: ${mb(total).trim()} MB in ${count} nodes`);
console.log('by type / constructor (self size, MB):');
for (const [key, size] of [...byConstructor].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${mb(size)}  ${key}`);
console.log(`module source text held: ${mb(sources).trim()} MB; by package (MB):`);
for (const [key, size] of [...bySourcePackage].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${mb(size)}  ${key}`);
