// Types of render.js (plain JavaScript, loaded as it is by browsers and imported by the daemon).
import type { StatusReport } from '../status-report.js';

export interface ViewNode {
  readonly tag: string;
  readonly attrs: Readonly<Record<string, string | number | boolean | null | undefined>>;
  readonly children: ReadonlyArray<ViewNode | string>;
  readonly ns?: string;
  readonly live?: 'all' | 'attrs';
}

/** The page's header and main for a report (null: the empty frame). */
export function pageBody(report: StatusReport | null): ViewNode[];
export function liveNodes(nodes: ReadonlyArray<ViewNode | string>): ViewNode[];
export function toHtml(node: ViewNode | string): string;
