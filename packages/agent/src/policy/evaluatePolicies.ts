import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JsonObject, PolicyResult, PolicyToEvaluate } from '@trellis/core';
import { denyRef, opaMessage, packagePathOf, runOpa } from './opa.js';

export interface PolicyEvaluation {
  /** The `opa` binary. */
  bin: string;
  /** A directory of the job's workspace (made here, owner-only). */
  dir: string;
  /** The plan as `show -json` prints it. */
  plan: unknown;
  /** `input.trellis`: the vine, vineyard and job. */
  trellis: JsonObject;
  policies: PolicyToEvaluate[];
}

/**
 * Evaluates each policy's `deny` on the plan with the real OPA engine. The input (the plan with
 * `trellis` added) and the modules are files of the workspace, mode 0600, never logged. A module
 * that does not compile, or whose evaluation fails, fails its policy with the engine's message.
 */
export async function evaluatePolicies(evaluation: PolicyEvaluation): Promise<PolicyResult[]> {
  const { bin, dir, policies } = evaluation;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const base = isObject(evaluation.plan) ? evaluation.plan : {};
  writeFileSync(join(dir, 'input.json'), JSON.stringify({ ...base, trellis: evaluation.trellis }), { mode: 0o600 });
  const results: PolicyResult[] = [];
  for (const [index, policy] of policies.entries()) {
    const file = `policy-${index + 1}.rego`;
    writeFileSync(join(dir, file), policy.module, { mode: 0o600 });
    const outcome = await evaluateOne(bin, dir, file);
    results.push({
      policy_id: policy.id,
      version: policy.version,
      name: policy.name,
      enforcement: policy.enforcement,
      passed: outcome.passed,
      messages: outcome.messages,
    });
  }
  return results;
}

async function evaluateOne(bin: string, dir: string, file: string): Promise<{ passed: boolean; messages: string[] }> {
  const parsed = await runOpa(bin, ['parse', '--format', 'json', file], dir);
  if (parsed.code !== 0) return failed(`the module does not compile: ${opaMessage(parsed, dir)}`);
  let path: string[] | null;
  try {
    path = packagePathOf(JSON.parse(parsed.stdout));
  } catch {
    path = null;
  }
  if (path === null) return failed('the module names no package opa can read');
  const evaluated = await runOpa(
    bin,
    ['eval', '--format', 'json', '--data', file, '--input', 'input.json', denyRef(path)],
    dir,
  );
  const answer = readJson(evaluated.stdout);
  const errors = isObject(answer) && Array.isArray(answer.errors) ? answer.errors : null;
  if (evaluated.code !== 0 || errors) {
    const message = errors ? errors.map(describeOpaError).join('; ') : opaMessage(evaluated, dir);
    return failed(`the module does not compile or its evaluation failed: ${message}`);
  }
  const result = isObject(answer) && Array.isArray(answer.result) ? answer.result : [];
  const first = result[0] as { expressions?: { value?: unknown }[] } | undefined;
  const value = first?.expressions?.[0]?.value;
  if (value === undefined) return failed('the module has no `deny` rule');
  const denials = Array.isArray(value) ? value : isObject(value) ? Object.keys(value) : [value];
  const messages = denials.map((denial) => clip(typeof denial === 'string' ? denial : JSON.stringify(denial)));
  return { passed: messages.length === 0, messages: capped(messages) };
}

/** A policy reports at most this many messages, each at most this long: the report stays small. */
export const MAX_POLICY_MESSAGES = 50;
export const MAX_POLICY_MESSAGE_CHARS = 1000;

function clip(message: string): string {
  return message.length > MAX_POLICY_MESSAGE_CHARS ? `${message.slice(0, MAX_POLICY_MESSAGE_CHARS - 1)}…` : message;
}

function capped(messages: string[]): string[] {
  if (messages.length <= MAX_POLICY_MESSAGES) return messages;
  const kept = messages.slice(0, MAX_POLICY_MESSAGES - 1);
  return [...kept, `… and ${messages.length - kept.length} more`];
}

function failed(message: string): { passed: false; messages: string[] } {
  return { passed: false, messages: [clip(message)] };
}

function describeOpaError(error: unknown): string {
  if (!isObject(error)) return String(error);
  const location = isObject(error.location) ? error.location : null;
  const where = location && typeof location.row === 'number' ? ` (line ${location.row})` : '';
  return `${typeof error.code === 'string' ? `${error.code}: ` : ''}${String(error.message ?? '')}${where}`;
}

function readJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The job log's account of the results: each policy, passed or failed, with its messages. */
export function summarizePolicyResults(
  results: PolicyResult[],
  blocked = 'a DEPLOY of this plan is refused unless an admin overrides',
): string[] {
  const lines: string[] = [];
  for (const result of results) {
    const verdict = result.passed
      ? 'passed'
      : result.enforcement === 'mandatory'
        ? 'FAILED'
        : 'failed (advisory: a warning)';
    lines.push(`policy ${result.name} v${result.version} (${result.enforcement}): ${verdict}`);
    for (const message of result.messages) lines.push(`  - ${message}`);
  }
  const mandatory = results.filter((r) => !r.passed && r.enforcement === 'mandatory').length;
  const advisory = results.filter((r) => !r.passed && r.enforcement === 'advisory').length;
  lines.push(
    `policies: ${results.length - mandatory - advisory} passed, ${mandatory} mandatory failed, ${advisory} advisory failed` +
      (mandatory > 0 ? `; ${blocked}` : ''),
  );
  return lines;
}
