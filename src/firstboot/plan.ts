// First boot of a flashed card, the part without I/O: given metergate.yaml from the boot
// partition and which files lie next to it, which files move to /etc/metergate, how the
// settings that name them read afterwards, and what the validation must look at.
import { basename, posix } from 'node:path';
import { isMap, isScalar, parseDocument, type Document } from 'yaml';
import { parseYaml } from '../config/yaml-syntax.js';

export const CONFIG_DIR = '/etc/metergate';
export const BOOT_CONFIG = 'metergate.yaml';
export const ERROR_FILE = 'metergate-error.txt';
export const APPLIED_FILE = 'metergate-applied.txt';

/** A setting that names a file (every `*_file` key: passwords, tokens, CA, certificates, keys). */
export interface FileSetting {
  /** Dotted path, e.g. `mqtt.password_file`. */
  readonly setting: string;
  readonly keyPath: readonly (string | number)[];
  /** As written in metergate.yaml. */
  readonly path: string;
}

export interface FileMove {
  /** File name on the boot partition (next to metergate.yaml). */
  readonly name: string;
  /** Absolute path on the gateway, under /etc/metergate. */
  readonly target: string;
}

export interface FirstBootPlan {
  /** YAML syntax problems; when there are any, nothing else is planned. */
  readonly syntaxProblems: readonly string[];
  readonly fileSettings: readonly FileSetting[];
  readonly moves: readonly FileMove[];
  /** The config as it will be written to /etc/metergate/config.yaml (comments kept). */
  readonly configText: string;
  /** The parsed config with every file setting pointing where the file is now, for validation. */
  readonly forValidation: unknown;
  /** File settings whose file is neither next to metergate.yaml nor on the gateway: one problem each. */
  readonly missingFiles: readonly { readonly setting: string; readonly problem: string }[];
}

function fileSettings(doc: Document): FileSetting[] {
  const found: FileSetting[] = [];
  const walk = (node: unknown, keyPath: (string | number)[]) => {
    if (!isMap(node)) return;
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const path = [...keyPath, key];
      if (isScalar(pair.value) && typeof pair.value.value === 'string' && key.endsWith('_file')) {
        found.push({ setting: path.join('.'), keyPath: path, path: pair.value.value });
      } else {
        walk(pair.value, path);
      }
    }
  };
  walk(doc.contents, []);
  return found;
}

/**
 * `bootFiles`: names of the files next to metergate.yaml (in `bootDir`, as this process
 * reads it). `onGateway(path)`: where this process reads an absolute gateway path that
 * exists already (a CA installed earlier, say), or undefined.
 * A file setting whose file name lies next to metergate.yaml moves to /etc/metergate under
 * that name, wherever the setting pointed (/etc/metergate/x, /boot/firmware/x or just x):
 * secrets do not stay on a FAT partition that any laptop reads.
 */
export function planFirstBoot(text: string, bootFiles: ReadonlySet<string>, onGateway: (path: string) => string | undefined, bootDir: string): FirstBootPlan {
  const { doc, problems: syntaxProblems } = parseYaml(text);
  if (syntaxProblems.length > 0) {
    return { syntaxProblems, fileSettings: [], moves: [], configText: text, forValidation: null, missingFiles: [] };
  }
  const settings = fileSettings(doc);
  const moves = new Map<string, FileMove>();
  const validation = parseDocument(text);
  const missingFiles: { setting: string; problem: string }[] = [];
  let rewritten = false;
  for (const s of settings) {
    const name = basename(s.path);
    const target = posix.join(CONFIG_DIR, name);
    if (bootFiles.has(name) && name !== BOOT_CONFIG && name !== ERROR_FILE && name !== APPLIED_FILE) {
      moves.set(name, { name, target });
      if (s.path !== target) {
        doc.setIn(s.keyPath, target);
        rewritten = true;
      }
      validation.setIn(s.keyPath, posix.join(bootDir, name));
    } else {
      const local = posix.isAbsolute(s.path) ? onGateway(s.path) : undefined;
      if (local !== undefined) {
        validation.setIn(s.keyPath, local);
        continue;
      }
      missingFiles.push({
        setting: s.setting,
        problem: `${s.setting}: ${s.path} is neither next to ${BOOT_CONFIG} on the boot partition nor on the gateway: put ${name} next to ${BOOT_CONFIG}`,
      });
    }
  }
  return {
    syntaxProblems: [],
    fileSettings: settings,
    moves: [...moves.values()],
    configText: rewritten ? doc.toString() : text,
    forValidation: validation.toJS(),
    missingFiles,
  };
}

/** The text of metergate-error.txt: CRLF line ends, so Notepad on the installer's laptop shows lines. */
export function errorReport(problems: readonly string[], checkedAt: Date): string {
  const lines = [
    `metergate did NOT use ${BOOT_CONFIG} (checked ${checkedAt.toISOString()}).`,
    '',
    'Problems, one per line (setting: what is wrong):',
    ...problems.map((p) => `  - ${p}`),
    '',
    `What to do: fix ${BOOT_CONFIG} on this card's boot partition (any laptop can open it),`,
    'keep the files it names (password, CA certificate) next to it, and boot the gateway again.',
    'Nothing was changed on the gateway: it keeps running with its previous configuration.',
    'Every setting is explained in /opt/metergate/config/example.yaml and docs/install.md.',
  ];
  return `${lines.join('\r\n')}\r\n`;
}

/** The text of metergate-applied.txt: what was taken, never the secrets themselves. */
export function appliedReport(moves: readonly FileMove[], appliedAt: Date): string {
  const lines = [
    `metergate took ${BOOT_CONFIG} at ${appliedAt.toISOString()}: it is now ${CONFIG_DIR}/config.yaml on the gateway.`,
    ...moves.map((m) => `${m.name} was moved to ${m.target} (removed from this partition).`),
    'To change the configuration later, drop a new metergate.yaml here and reboot, or edit it on the gateway.',
  ];
  return `${lines.join('\r\n')}\r\n`;
}
