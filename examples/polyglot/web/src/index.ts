export function double(n: number): number {
  return n * 2;
}

export const bad: string = double(2); // deliberate type error
