// A YAML file parsed with its syntax errors as problems a person can act on (pure): each one
// `(yaml) line L, column C: message (line L reads "...")`. The yaml library's pretty error
// ends its first line with "at line L, column C:" and puts the excerpt on the lines after;
// taking only that first line left a dangling colon and the line number twice. Used by the
// config loader and by firstboot (whose problems go to metergate-error.txt).
import { LineCounter, parseDocument, type Document } from 'yaml';

export interface ParsedYaml {
  readonly doc: Document.Parsed;
  /** Empty when the text is valid YAML. */
  readonly problems: readonly string[];
}

/** How much of the offending line is quoted (a long line is cut, with an ellipsis). */
const EXCERPT_CHARS = 80;

export function parseYaml(text: string): ParsedYaml {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const lines = text.split(/\r?\n/);
  const problems = doc.errors.map((e) => {
    const message = e.message.split('\n')[0]!.trim().replace(/:$/, '');
    const { line, col } = lineCounter.linePos(e.pos[0]);
    const source = lines[line - 1]?.trimEnd() ?? '';
    const excerpt = source.length > EXCERPT_CHARS ? `${source.slice(0, EXCERPT_CHARS)}…` : source;
    return `(yaml) line ${line}, column ${col}: ${message}${excerpt === '' ? '' : ` (line ${line} reads ${JSON.stringify(excerpt)})`}`;
  });
  return { doc, problems };
}
