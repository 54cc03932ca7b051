import { describe, expect, it } from 'vitest';
import { AgentLogger, parseLogLevel } from '../../src/logging/AgentLogger.js';

function capture() {
  const lines: string[] = [];
  return {
    lines,
    destination: { write: (line: string) => lines.push(line) },
    parsed: () => lines.map((l) => JSON.parse(l)),
  };
}

describe('the agent log (pino)', () => {
  it('writes one JSON object a line: ISO time, level as a word, message and fields', () => {
    const out = capture();
    const logger = new AgentLogger('info', { worker_id: 'w1' }, out.destination);
    logger.child({ job_id: 'j1' }).warn('status report failed; retrying', { retry_in_ms: 500 });
    logger.debug('not shown at info');
    const [entry] = out.parsed();
    expect(out.lines).toHaveLength(1);
    expect(entry).toMatchObject({
      level: 'warn',
      msg: 'status report failed; retrying',
      service: 'trellis-agent',
      worker_id: 'w1',
      job_id: 'j1',
      retry_in_ms: 500,
    });
    expect(new Date(entry.time).toISOString()).toBe(entry.time);
  });

  it('redacts credentials and stays quiet when silent', () => {
    const out = capture();
    new AgentLogger('debug', {}, out.destination).info('registered', { worker_token: 'tw_secret', token: 'x' });
    expect(out.lines.join('')).not.toContain('tw_secret');
    expect(out.parsed()[0]).toMatchObject({ worker_token: '***', token: '***' });
    const quiet = capture();
    new AgentLogger('silent', {}, quiet.destination).error('nothing');
    expect(quiet.lines).toEqual([]);
  });

  it('accepts only known levels', () => {
    expect(parseLogLevel(undefined)).toBe('info');
    expect(parseLogLevel('debug')).toBe('debug');
    expect(() => parseLogLevel('trace')).toThrow(/log level must be one of/);
  });
});
