// Types of diff-rows.js: the line diff the page and the command share.

export interface DiffRow {
  sign: " " | "-" | "+";
  text: string;
}
export interface DiffHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  rows: DiffRow[];
}
export function diffRows(before: string, after: string): DiffRow[];
export function diffHunks(before: string, after: string, context?: number): DiffHunk[];
