/**
 * `tsc --noEmit` in this process, through the TypeScript API, for the tests
 * that type-check a user's project (the package's declarations under each
 * module resolution, the integration guide's snippets). A worker parses each
 * declaration file of TypeScript's own libraries and of node_modules once and
 * keeps it: they do not change during a run, and parsing them (lib.dom.d.ts,
 * the SDKs' types) is most of what a `tsc` process spends.
 */
import { resolve } from "node:path";
import ts from "typescript";

const parsed = new Map<string, ts.SourceFile>();

/** Declaration files that cannot change during a run: TypeScript's libraries and installed packages'. */
const isStable = (fileName: string) =>
  fileName.endsWith(".d.ts") && fileName.includes("/node_modules/");

/**
 * Type-checks `files` with `options` (as tsc's command line would give them,
 * e.g. `{ module: "NodeNext", moduleResolution: "NodeNext" }`) as `tsc` run
 * in `cwd` would; what it would print, "" when clean.
 */
export function typeCheck(
  files: readonly string[],
  options: Record<string, unknown>,
  cwd: string,
): string {
  return typeCheckGroups([files], options, cwd)[0] ?? "";
}

/**
 * {@link typeCheck} of each group of files, all in one program: what is
 * shared (the libraries' declarations) is bound and checked once. A group's
 * answer is what tsc would print of its files, of the files no group names
 * (what any group imports, so a group may see an error of a file only
 * another imports) and of the options. The groups share one global scope:
 * a global one group's imports declare (`declare global`) is seen by all,
 * which a check of each group alone would not allow; for modules without
 * globals of their own, as the snippets are, the answers are tsc's.
 */
export function typeCheckGroups(
  groups: readonly (readonly string[])[],
  options: Record<string, unknown>,
  cwd: string,
): string[] {
  const converted = ts.convertCompilerOptionsFromJson({ ...options, noEmit: true }, cwd);
  if (converted.errors.length > 0) throw new Error(format(converted.errors, cwd));
  const host = ts.createCompilerHost(converted.options);
  host.getCurrentDirectory = () => cwd;
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    if (!isStable(fileName)) return read(fileName, languageVersion, onError, shouldCreate);
    const key = `${fileName}\0${JSON.stringify(languageVersion)}`;
    let file = parsed.get(key);
    if (!file) {
      file = read(fileName, languageVersion, onError, shouldCreate);
      if (file) parsed.set(key, file);
    }
    return file;
  };
  const paths = groups.map((group) => group.map((file) => resolve(cwd, file)));
  const named = new Set(paths.flat());
  const program = ts.createProgram([...named], converted.options, host);
  const diagnostics = ts.getPreEmitDiagnostics(program);
  return paths.map((group) =>
    format(
      diagnostics.filter(
        (diagnostic) =>
          !diagnostic.file ||
          !named.has(diagnostic.file.fileName) ||
          group.includes(diagnostic.file.fileName),
      ),
      cwd,
    ),
  );
}

function format(diagnostics: readonly ts.Diagnostic[], cwd: string): string {
  return ts.formatDiagnostics(diagnostics, {
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => cwd,
    getNewLine: () => "\n",
  });
}
