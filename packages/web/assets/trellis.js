// Trellis web interface: the little that needs a script. Served from the same origin (CSP
// script-src 'self'); every request it makes is same-origin with the session cookie, and the
// browser adds the Origin header that the API's CSRF check asks for.

{
  const base = document.body.dataset.base ?? '';

  /** A field of a refused request as the form labels it ("Paths"), else as the API names it. */
  const fieldLabel = (path, form) => {
    const field = String(path ?? '').replace(/^(?:body|query|path)\./, '');
    const name = field
      .replace(/(\.\d+|\[\d+\])+$/, '')
      .split('.')
      .pop();
    const input = name && form?.elements?.namedItem(name);
    const label = input instanceof Element ? input.closest('label')?.firstChild?.textContent?.trim() : '';
    return label || field;
  };

  /** The detail, then each field issue it does not already say, once: "… (Paths must not hold '..')". */
  const withFieldIssues = (problem, form) => {
    const lines = [];
    for (const issue of Array.isArray(problem.errors) ? problem.errors : []) {
      const line = `${fieldLabel(issue.path, form)} ${issue.message}`;
      const said = `${String(issue.path ?? '').replace(/^(?:body|query|path)\./, '')} ${issue.message}`;
      if (!problem.detail.includes(said) && !lines.includes(line)) lines.push(line);
    }
    return lines.length > 0 ? `${problem.detail} (${lines.join('; ')})` : problem.detail;
  };

  /** The message of a failed API call: the problem+json detail and code, or the HTTP status. */
  const problemMessage = async (response, form) => {
    if (response.status === 401) return 'Your session has ended: sign in again, then retry.';
    try {
      const problem = await response.json();
      if (problem?.detail) {
        const detail = withFieldIssues(problem, form);
        return problem.code ? `${detail} [${problem.code}]` : detail;
      }
    } catch {
      // not JSON: fall through to the status
    }
    return `The request failed (HTTP ${response.status}).`;
  };

  const showError = (message) => {
    const box = document.querySelector('[data-action-error]');
    if (!box) return;
    box.textContent = message;
    box.hidden = message === '';
  };

  const postJson = async (path, body, method = 'POST', form = null) => {
    const response = await fetch(`${base}${path}`, {
      method,
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(body ?? {}),
    });
    if (!response.ok) throw new Error(await problemMessage(response, form));
    return response.json();
  };

  /** Disables the button while its request runs; shows what went wrong. */
  const act = async (button, request) => {
    button.disabled = true;
    showError('');
    try {
      await request();
    } catch (error) {
      showError(error instanceof TypeError ? 'The control plane could not be reached; try again.' : error.message);
    } finally {
      button.disabled = false;
    }
  };

  // Plan, deploy (this plan), destroy: a new job through the JSON API, then its page.
  for (const button of document.querySelectorAll('[data-create-job]')) {
    button.addEventListener('click', () => {
      if (button.dataset.confirm && !window.confirm(button.dataset.confirm)) return;
      act(button, async () => {
        const body = { job_type: button.dataset.createJob, configuration_id: button.dataset.configurationId };
        if (button.dataset.planJobId) body.plan_job_id = button.dataset.planJobId;
        if (button.dataset.destroyPlan !== undefined) body.destroy = true;
        const job = await postJson('/api/jobs', body);
        window.location.assign(`${base}/jobs/${encodeURIComponent(job.id)}`);
      });
    });
  }

  // A drift check of a deployed vine (issue 14): a speculative plan, shown on its job page.
  for (const button of document.querySelectorAll('[data-drift-check]')) {
    button.addEventListener('click', () => {
      act(button, async () => {
        const job = await postJson(
          `/api/cli/configurations/${encodeURIComponent(button.dataset.driftCheck)}/drift-check`,
          {},
        );
        window.location.assign(`${base}/jobs/${encodeURIComponent(job.id)}`);
      });
    });
  }

  // Roll the state back to an older version (operators, issue 26), then show the page again.
  for (const button of document.querySelectorAll('[data-state-rollback]')) {
    button.addEventListener('click', () => {
      if (button.dataset.confirm && !window.confirm(button.dataset.confirm)) return;
      act(button, async () => {
        const vine = encodeURIComponent(button.dataset.configurationId);
        await postJson(
          `/api/cli/configurations/${vine}/state-versions/${encodeURIComponent(button.dataset.stateRollback)}/rollback`,
          {},
        );
        window.location.reload();
      });
    });
  }

  // Force-unlock a configuration's state (admins, issue 25), then show the page again.
  for (const button of document.querySelectorAll('[data-state-unlock]')) {
    button.addEventListener('click', () => {
      if (button.dataset.confirm && !window.confirm(button.dataset.confirm)) return;
      act(button, async () => {
        await postJson(
          `/api/cli/configurations/${encodeURIComponent(button.dataset.stateUnlock)}/state-lock`,
          {},
          'DELETE',
        );
        window.location.reload();
      });
    });
  }

  // Acknowledge a state written after a lost job (admins, issue 30), then show the page again.
  for (const button of document.querySelectorAll('[data-state-after-lost-ack]')) {
    button.addEventListener('click', () => {
      if (button.dataset.confirm && !window.confirm(button.dataset.confirm)) return;
      act(button, async () => {
        await postJson(
          `/api/cli/configurations/${encodeURIComponent(button.dataset.stateAfterLostAck)}/state-after-lost`,
          {},
          'DELETE',
        );
        window.location.reload();
      });
    });
  }

  // Drift schedule (admins): PATCH the configuration, then show the page again.
  for (const form of document.querySelectorAll('form[data-drift-settings]')) {
    const save = async (driftDetection, button) =>
      act(button, async () => {
        await postJson(
          `/api/cli/configurations/${encodeURIComponent(form.dataset.driftSettings)}`,
          { drift_detection: driftDetection },
          'PATCH',
        );
        window.location.reload();
      });
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const minutes = Number(form.elements.interval_minutes.value);
      save({ interval_minutes: minutes }, form.querySelector('[data-drift-save]'));
    });
    form.querySelector('[data-drift-off]')?.addEventListener('click', (event) => save(null, event.currentTarget));
  }

  // The approval setting of a vine (admins): PATCH the configuration, then show the page again.
  for (const form of document.querySelectorAll('form[data-approval-settings]')) {
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const required = form.elements.required.checked;
      act(form.querySelector('[data-approval-save]'), async () => {
        await postJson(
          `/api/cli/configurations/${encodeURIComponent(form.dataset.approvalSettings)}`,
          {
            approval: required ? { required: true, separate_approver: form.elements.separate_approver.checked } : null,
          },
          'PATCH',
        );
        window.location.reload();
      });
    });
  }

  // Approve, reject or override a plan (issue 15), then show the job again with the decision.
  for (const form of document.querySelectorAll('form[data-plan-review-form]')) {
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const action = form.dataset.planReviewForm;
      const box = document.querySelector('[data-review-error]');
      const button = form.querySelector('button');
      const body =
        action === 'override' ? { reason: form.elements.reason.value } : { comment: form.elements.comment.value };
      if (action === 'approve' && body.comment.trim() === '') delete body.comment;
      button.disabled = true;
      if (box) box.hidden = true;
      try {
        await postJson(`/api/cli/jobs/${encodeURIComponent(form.dataset.jobId)}/${action}`, body);
        window.location.reload();
      } catch (error) {
        if (box) {
          box.textContent =
            error instanceof TypeError ? 'The control plane could not be reached; try again.' : error.message;
          box.hidden = false;
        }
      } finally {
        button.disabled = false;
      }
    });
  }

  // A vine's repository connection (issue 13): PUT, then the page again; a manual connect shows
  // its secret once, in the page, and never again.
  for (const form of document.querySelectorAll('form[data-vcs-connect]')) {
    const path = `/api/cli/configurations/${encodeURIComponent(form.dataset.vcsConnect)}/vcs`;
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const button = form.querySelector('[data-vcs-save]');
      act(button, async () => {
        const fields = form.elements;
        const paths = fields.paths.value
          .split(',')
          .map((pattern) => pattern.trim())
          .filter((pattern) => pattern !== '');
        const connection = await postJson(
          path,
          {
            provider: fields.provider.value,
            repository: fields.repository.value.trim(),
            branch: fields.branch.value.trim(),
            paths,
            auto_deploy: fields.auto_deploy.checked,
            pull_requests: fields.pull_requests.checked,
            fork_pull_requests: fields.fork_pull_requests.value,
            webhook: fields.manual.checked ? 'manual' : 'auto',
          },
          'PUT',
          form,
        );
        if (!connection.webhook_secret) {
          window.location.reload();
          return;
        }
        const box = document.querySelector('[data-vcs-secret]');
        box.querySelector('[data-vcs-secret-url]').textContent = connection.webhook_url;
        box.querySelector('[data-vcs-secret-value]').textContent = connection.webhook_secret;
        box.hidden = false;
        form.hidden = true;
      });
    });
    const disconnect = form.querySelector('[data-vcs-disconnect]');
    disconnect?.addEventListener('click', () => {
      if (!window.confirm(disconnect.dataset.confirm)) return;
      act(disconnect, async () => {
        const response = await fetch(`${base}${path}`, { method: 'DELETE', credentials: 'same-origin' });
        if (!response.ok) throw new Error(await problemMessage(response));
        window.location.reload();
      });
    });
  }

  // Sign out: the API clears the cookie (POST with our Origin), then the sign-in page.
  for (const form of document.querySelectorAll('form[data-signout]')) {
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      fetch(form.action, { method: 'POST', credentials: 'same-origin' }).finally(() => {
        window.location.assign(form.dataset.then);
      });
    });
  }

  // The organization switcher: a GET form, sent as soon as another owner is chosen.
  for (const form of document.querySelectorAll('form[data-org-switcher]')) {
    const go = form.querySelector('[data-org-switch-go]');
    if (go) go.hidden = true;
    form.querySelector('select')?.addEventListener('change', () => form.submit());
  }

  // Removing a member, or leaving an organization, asks first.
  for (const form of document.querySelectorAll('form[data-confirm]')) {
    form.addEventListener('submit', (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  }

  // Copy buttons (the CLI verification code).
  for (const button of document.querySelectorAll('[data-copy]')) {
    button.addEventListener('click', async () => {
      const label = button.textContent;
      try {
        await navigator.clipboard.writeText(button.dataset.copy);
        button.textContent = 'Copied';
      } catch {
        const output = document.getElementById('verification-code');
        if (output) window.getSelection()?.selectAllChildren(output);
        button.textContent = 'Press Ctrl+C';
      }
      setTimeout(() => {
        button.textContent = label;
      }, 2000);
    });
  }

  const TONES = {
    QUEUED: 'waiting',
    PROCESSING: 'running',
    SUCCESS: 'good',
    FAILED: 'bad',
    CANCELLED: 'neutral',
  };
  const TERMINAL = new Set(['SUCCESS', 'FAILED', 'CANCELLED']);

  const showJobStatus = (status, errorMessage) => {
    const badge = document.getElementById('job-status');
    if (badge) {
      badge.textContent = status;
      badge.dataset.status = status;
      badge.className = `badge tone-${TONES[status] ?? 'neutral'}`;
    }
    // Why a queued job waited, and its place in the queue (as of the page's load), say nothing once it runs or ends.
    if (status !== 'QUEUED') {
      for (const note of document.querySelectorAll(
        '[data-waiting-for]:not([data-waiting-for="approval"]), [data-queue-position]',
      )) {
        note.hidden = true;
      }
    }
    const error = document.querySelector('[data-job-error]');
    if (error && errorMessage) {
      error.textContent = errorMessage;
      error.hidden = false;
    }
    if (TERMINAL.has(status)) {
      for (const cancel of document.querySelectorAll('[data-cancel-job]')) cancel.hidden = true;
      const finished = document.querySelector('[data-finished]');
      if (finished?.querySelector('.muted')) finished.textContent = 'just now';
    }
    if (status === 'SUCCESS') {
      for (const deploy of document.querySelectorAll('[data-deploy-plan]')) deploy.hidden = false;
    }
  };

  for (const button of document.querySelectorAll('[data-cancel-job]')) {
    button.addEventListener('click', () => {
      if (!window.confirm('Cancel this job? A running engine is interrupted.')) return;
      act(button, async () => {
        const job = await postJson(`/api/cli/jobs/${encodeURIComponent(button.dataset.cancelJob)}/cancel`);
        showJobStatus(job.status, job.error_message);
      });
    });
  }

  // The engine's "Plan: 1 to add, 0 to change, 0 to destroy." line (or the agent's "plan: …"), or "No changes.".
  const PLAN_LINE = /plan:(?: \d+ to import,)? (\d+) to add, (\d+) to change, (\d+) to destroy/i;
  const NO_CHANGES = /No changes\./;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour sequences start with ESC
  const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

  /**
   * Follows the job log over Server-Sent Events. Chunks are shown by id and a chunk whose id is
   * not above the last one shown is ignored, so a stream that resumes (the browser sends
   * Last-Event-ID; a new EventSource asks for ?after=) never leaves a gap or shows a line twice.
   */
  const followLog = (log) => {
    const state = document.querySelector('[data-stream-state]');
    const summary = document.querySelector('[data-plan-summary]');
    const readsSummary = summary && !('fromMetadata' in summary.dataset);
    let lastId = 0;
    let ended = false;
    let retries = 0;
    let planTail = '';
    let pending = [];
    let flushQueued = false;

    const setState = (kind, text) => {
      if (!state) return;
      state.className = `stream-state ${kind}`;
      state.textContent = text;
    };

    const readSummary = (text) => {
      if (!readsSummary) return;
      const recent = planTail + text;
      planTail = recent.slice(-200);
      const plan = PLAN_LINE.exec(recent);
      if (plan) summary.textContent = `${plan[1]} to add, ${plan[2]} to change, ${plan[3]} to destroy`;
      else if (NO_CHANGES.test(recent)) summary.textContent = 'No changes.';
    };

    // Appends in one batch per frame: a long backlog arrives as hundreds of events at once.
    const flush = () => {
      flushQueued = false;
      const follow = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
      const fragment = document.createDocumentFragment();
      for (const chunk of pending) {
        const span = document.createElement('span');
        span.className = `chunk stream-${String(chunk.stream_type).toLowerCase()}`;
        span.dataset.id = String(chunk.id);
        span.textContent = chunk.log_chunk.replace(ANSI, '');
        fragment.append(span);
      }
      pending = [];
      log.append(fragment);
      if (follow) log.scrollTop = log.scrollHeight;
    };

    const connect = () => {
      const url = lastId > 0 ? `${log.dataset.stream}?after=${lastId}` : log.dataset.stream;
      const source = new EventSource(url);
      source.addEventListener('open', () => {
        retries = 0;
        setState('live', 'live');
      });
      source.addEventListener('log', (event) => {
        const chunk = JSON.parse(event.data);
        if (!(chunk.id > lastId)) return;
        lastId = chunk.id;
        readSummary(chunk.log_chunk);
        pending.push(chunk);
        if (!flushQueued) {
          flushQueued = true;
          requestAnimationFrame(flush);
        }
      });
      source.addEventListener('status', (event) => {
        const data = JSON.parse(event.data);
        showJobStatus(data.status, data.error_message);
      });
      source.addEventListener('end', () => {
        ended = true;
        source.close();
        setState('ended', 'finished');
      });
      source.addEventListener('error', () => {
        if (ended) return;
        setState('retrying', 'connection lost, reconnecting…');
        // The browser retries by itself unless the answer was an HTTP error; then we do, unless
        // the session is over (retrying would never work).
        if (source.readyState === EventSource.CLOSED) {
          retries += 1;
          const delay = Math.min(15_000, 1000 * 2 ** Math.min(retries - 1, 4));
          setTimeout(async () => {
            const probe = await fetch(`${base}/api/cli/jobs/${encodeURIComponent(log.dataset.jobId)}`, {
              credentials: 'same-origin',
            }).catch(() => null);
            if (probe?.status === 401) setState('ended', 'signed out: reload the page to sign in again');
            else connect();
          }, delay);
        }
      });
    };
    connect();
  };

  // Editing a vine (issue 25): one PATCH with only what changed; sensitive values are write-only.
  for (const form of document.querySelectorAll('form[data-vine-edit]')) {
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const body = {};
      const { elements } = form;
      if (elements.name.value !== elements.name.dataset.original) body.name = elements.name.value;
      if (
        elements.engine.value !== elements.engine.dataset.original ||
        elements.engine_version.value !== elements.engine_version.dataset.original
      ) {
        body.engine = { name: elements.engine.value, version: elements.engine_version.value || null };
      }
      if (elements.execution_mode.value !== elements.execution_mode.dataset.original) {
        body.execution_mode = elements.execution_mode.value;
      }
      const variables = {};
      for (const row of form.querySelectorAll('tr[data-variable]')) {
        const name = row.dataset.variable;
        const value = row.querySelector('[name=value]');
        const sensitive = row.querySelector('[name=sensitive]').checked;
        const wasSensitive = row.dataset.sensitive === 'true';
        if (row.querySelector('[name=remove]').checked) variables[name] = null;
        else if (wasSensitive && value.value !== '') variables[name] = { value: value.value, sensitive };
        else if (!wasSensitive && (value.value !== value.dataset.original || sensitive)) {
          variables[name] = { value: value.value, sensitive };
        }
      }
      if (elements.new_name.value !== '') {
        variables[elements.new_name.value] = {
          value: elements.new_value.value,
          sensitive: elements.new_sensitive.checked,
        };
      }
      if (Object.keys(variables).length > 0) body.variables = variables;
      const fileAreas = form.querySelectorAll('textarea[data-file]');
      if (fileAreas.length > 0) {
        const files = {};
        let changed = false;
        for (const area of fileAreas) {
          files[area.dataset.file] = area.value;
          changed ||= area.value !== area.defaultValue;
        }
        if (elements.new_file_name.value !== '') {
          files[elements.new_file_name.value] = elements.new_file_content.value;
          changed = true;
        }
        if (changed) body.source = { type: 'inline', files };
      }
      act(form.querySelector('[data-vine-save]'), async () => {
        await postJson(`/api/cli/configurations/${encodeURIComponent(form.dataset.vineEdit)}`, body, 'PATCH');
        window.location.assign(form.dataset.then);
      });
    });
  }

  const log = document.getElementById('log');
  if (log?.dataset.stream) followLog(log);
}
