// config/example.yaml is the installer's reference: every setting of the schema appears
// in it, set or as a commented default.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/config-schema.js';

interface Node {
  properties?: Record<string, Node>;
}

function leafPaths(node: Node, prefix: string[] = []): string[][] {
  return Object.entries(node.properties ?? {}).flatMap(([k, v]) => (v.properties ? leafPaths(v, [...prefix, k]) : [[...prefix, k]]));
}

describe('config/example.yaml', () => {
  it('mentions every setting of src/config/schema.json', () => {
    const text = readFileSync('config/example.yaml', 'utf8');
    const missing = leafPaths(configSchema as Node).filter((path) => !new RegExp(`^[#\\s-]*${path[path.length - 1]}:`, 'm').test(text));
    expect(missing.map((p) => p.join('.'))).toEqual([]);
  });
});
