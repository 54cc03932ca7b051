import { describe, expect, it } from 'vitest';
import { escapeHtml, externalUrl, html } from '../src/html.js';

describe('html templates', () => {
  it('escape every interpolation unless it is a nested template', () => {
    const name = `<b onclick="x">'&'</b>`;
    expect(html`<p title="${name}">${name}</p>`.value).toBe(
      '<p title="&lt;b onclick=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/b&gt;">&lt;b onclick=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/b&gt;</p>',
    );
    expect(html`<ul>${['a<', 'b'].map((item) => html`<li>${item}</li>`)}</ul>`.value).toBe(
      '<ul><li>a&lt;</li><li>b</li></ul>',
    );
    expect(html`${null}${undefined}${false}${0}`.value).toBe('0');
    expect(escapeHtml('`')).toBe('&#96;');
  });

  it('make links only of http(s) URLs', () => {
    expect(externalUrl('https://argocd.example.com/app')).toBe('https://argocd.example.com/app');
    for (const bad of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', 'data:text/html,x', '/relative', 42, null]) {
      expect(externalUrl(bad)).toBeNull();
    }
  });
});

describe('job labels', () => {
  it('say a job was queued by the stock CLI (issue 27)', async () => {
    const { jobTypeLabel, triggerText } = await import('../src/format.js');
    expect(jobTypeLabel({ job_type: 'PLAN', plan_job_id: null, trigger: { type: 'cli' } })).toBe('Plan (tofu CLI)');
    expect(jobTypeLabel({ job_type: 'DEPLOY', plan_job_id: null, trigger: { type: 'cli' } })).toBe('Deploy (tofu CLI)');
    expect(triggerText('', { type: 'cli' }).value).toBe('tofu CLI (remote run)');
  });
});
