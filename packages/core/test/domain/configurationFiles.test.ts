import { isConfigurationFile, isConfigurationPath } from '@trellis/core';
import { describe, expect, it } from 'vitest';

/** The files of a directory that make an inline source: one rule for the CLI's `--dir` and the web's upload. */
describe('configuration files', () => {
  it('are HCL and JSON sources, variable files and the dependency lock file', () => {
    for (const name of ['main.tf', 'x.tf.json', 'prod.tfvars', 'prod.tfvars.json', '.terraform.lock.hcl']) {
      expect(isConfigurationFile(name)).toBe(true);
    }
    for (const name of ['terraform.tfstate', 'terraform.tfstate.backup', '.env', '.hidden.tf', 'README.md', 'tf']) {
      expect(isConfigurationFile(name)).toBe(false);
    }
  });

  it('are found outside .terraform/, other dotted directories and node_modules/', () => {
    expect(isConfigurationPath('modules/net/main.tf')).toBe(true);
    expect(isConfigurationPath('main.tf')).toBe(true);
    expect(isConfigurationPath('.terraform/modules/x/main.tf')).toBe(false);
    expect(isConfigurationPath('.git/hooks/x.tf')).toBe(false);
    expect(isConfigurationPath('node_modules/x/main.tf')).toBe(false);
    expect(isConfigurationPath('modules/net/terraform.tfstate')).toBe(false);
  });
});
