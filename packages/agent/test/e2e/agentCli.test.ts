/** `trellis-agent` argument parsing (clipanion): commands, usage, version and usage errors. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AGENT_VERSION } from '../../src/version.js';

// clipanion loads as CommonJS only in Node itself, so the built bin runs as a process.
const AGENT_BIN = fileURLToPath(new URL('../../dist/bin/trellis-agent.js', import.meta.url));

function agentCli(
  argv: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [AGENT_BIN, ...argv], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (data) => {
      out += data;
    });
    child.stderr.on('data', (data) => {
      err += data;
    });
    child.on('error', reject);
    child.once('close', (code) => resolve({ code, out, err }));
  });
}

describe('trellis-agent arguments', () => {
  it('prints its version', async () => {
    expect(await agentCli(['--version'])).toMatchObject({ code: 0, out: `${AGENT_VERSION}\n` });
    expect(await agentCli(['version'])).toMatchObject({ code: 0, out: `${AGENT_VERSION}\n` });
  });

  it('lists its commands without arguments (exit 2) and with --help (exit 0)', async () => {
    const bare = await agentCli([]);
    expect(bare.code).toBe(2);
    expect(bare.out).toContain('trellis-agent register');
    expect(bare.out).toContain('trellis-agent run');
    const help = await agentCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('--once');
  });

  it('shows each command with its flags, environment variables and examples', async () => {
    const run = await agentCli(['run', '--help']);
    expect(run.code).toBe(0);
    for (const text of [
      '--once',
      '--claim-wait',
      'TRELLIS_AGENT_CONCURRENCY',
      'TRELLIS_ALLOW_FILE_SOURCES',
      'Examples',
    ]) {
      expect(run.out).toContain(text);
    }
    const register = await agentCli(['register', '-h']);
    expect(register.out).toContain('$ trellis-agent register --name build-01');
  });

  it('refuses unknown commands, unknown flags and flags without their value (exit 2)', async () => {
    for (const argv of [['bogus'], ['run', '--bogus'], ['run', '--concurrency'], ['register', '--name']]) {
      const result = await agentCli(argv);
      expect(result.code).toBe(2);
      expect(result.err).toMatch(/Unknown Syntax Error|Not enough arguments/);
    }
  });

  it('hands the flags to the command: register needs a name, run its credentials (exit 3)', async () => {
    const register = await agentCli(['register']);
    expect(register).toMatchObject({ code: 2, err: 'trellis-agent register: --name <name> is required\n' });
    const run = await agentCli(['run', '--once', '--credentials-file', '/nonexistent/agent.json'], {
      HOME: '/nonexistent',
    });
    expect(run.code).toBe(3);
    expect(run.err).toContain('trellis-agent register --name');
  });
});
