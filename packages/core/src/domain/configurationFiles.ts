/**
 * Which files of a local directory make a configuration's inline source: HCL and JSON sources,
 * variable files and the dependency lock file, outside `.terraform/`, other dotted directories and
 * `node_modules/`. One rule for `trellis configs create --dir` and the web's uploaded directory.
 */
const WANTED = [/\.tf$/, /\.tf\.json$/, /\.tfvars$/, /\.tfvars\.json$/];
const LOCK_FILE = '.terraform.lock.hcl';

/** Whether a file (its name, no directory) is part of a configuration. */
export function isConfigurationFile(name: string): boolean {
  if (name === LOCK_FILE) return true;
  if (name.startsWith('.')) return false;
  return WANTED.some((pattern) => pattern.test(name));
}

/** Whether a directory (its name) is walked into: not `.terraform/`, other dotted ones or `node_modules/`. */
export function isConfigurationDirectory(name: string): boolean {
  return !name.startsWith('.') && name !== 'node_modules';
}

/** Whether a file at a relative path (with `/`) is part of a configuration: every directory walked, the file wanted. */
export function isConfigurationPath(path: string): boolean {
  const parts = path.split('/');
  const file = parts.pop() ?? '';
  return parts.every(isConfigurationDirectory) && isConfigurationFile(file);
}
