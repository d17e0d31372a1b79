// `lode driver`: placeholder, replaced by the real flag parsing in the next commit.
export async function runDriverCommand(_argv: string[]): Promise<number> {
  return 2;
}
