// `lode bench` and `lode demo`: placeholder until the cluster bench lands.
export async function runBenchCommand(_argv: string[]): Promise<number> {
  process.stderr.write('lode bench: not built yet\n');
  return 2;
}
