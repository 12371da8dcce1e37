// Fixture of the scanners that read code through the lexer (src/ops/scanner_fixtures.rs).
//
// Each `// expect KIND: VALUE` comment says what one of them finds, and they find nothing
// else: `name` the hooks' top-level names (and an edit of its statement changes that name
// alone), `import` the import scanner's targets, `decl` the first line of each declaration part
// of the re-check fingerprint. A comment's words are no code: import { x } from "nowhere";

// expect import: /fixture/lib/util
// expect decl: import { join } from "./lib/util";
import { join } from "./lib/util";
// expect import: rxjs
// expect decl: import { map } from 'rxjs';
import { map } from 'rxjs'; // not "from 'other'"

// A template's fields hold code: strings, braces and templates of their own.
// expect name: label
// expect decl: export const label = (n: number): string => `${n > 1 ? `${n} items` : "one `item`"} (${"}"})`;
export const label = (n: number): string => `${n > 1 ? `${n} items` : "one `item`"} (${"}"})`;

// expect name: brace
// expect decl: export const brace = `${`}`}{`;
export const brace = `${`}`}{`;

// Regular expressions holding quotes and brackets, told from division.
// expect name: QUOTE
// expect decl: export const QUOTE = /[(]"/g;
export const QUOTE = /[(]"/g;

// expect name: ratio
// expect decl: export function ratio(a: number, b: number): number {}
export function ratio(a: number, b: number): number {
  return a / b / (2 / 1) + (/\)'/.test(join(map)) ? 1 : 0);
}

/* A block comment: ( { [ ` ' " */
// expect name: Shape
// expect decl: export class Shape {
export class Shape {
  area(k: number): number {
    return k * 2;
  }
}
