// Trellis web interface: every change is a plain form that works without a script (issue 29), some
// sent in place by htmx. This follows a job's log and status live, copies, and sends the switcher.

{
  const base = document.body.dataset.base ?? '';

  // The organization switcher: a GET form, sent as soon as another owner is chosen.
  for (const form of document.querySelectorAll('form[data-org-switcher]')) {
    form.querySelector('select')?.addEventListener('change', () => form.requestSubmit());
  }

  // Copy buttons (a verification code, a token, a secret).
  for (const button of document.querySelectorAll('[data-copy]')) {
    const label = button.textContent;
    const say = (text) => {
      button.textContent = text;
      setTimeout(() => Object.assign(button, { textContent: label }), 2000);
    };
    button.addEventListener('click', () =>
      navigator.clipboard.writeText(button.dataset.copy).then(
        () => say('Copied'),
        () => say('Press Ctrl+C'),
      ),
    );
  }

  const TONES = { QUEUED: 'waiting', PROCESSING: 'running', SUCCESS: 'good', FAILED: 'bad', CANCELLED: 'neutral' };

  /** A job's status as the stream says it: the badge, the error, what is offered once it ends. */
  const showJobStatus = (status, errorMessage) => {
    const badge = document.getElementById('job-status');
    if (badge) Object.assign(badge, { textContent: status, className: `badge tone-${TONES[status]}` });
    if (badge) badge.dataset.status = status;
    // Why a queued job waited, and its place in the queue (as of the page's load), say nothing once it runs or ends.
    const waiting = '[data-waiting-for]:not([data-waiting-for="approval"]), [data-queue-position]';
    for (const note of document.querySelectorAll(waiting)) note.hidden ||= status !== 'QUEUED';
    const error = document.querySelector('[data-job-error]');
    if (error && errorMessage) Object.assign(error, { textContent: errorMessage, hidden: false });
    if (status === 'SUCCESS' || status === 'FAILED' || status === 'CANCELLED') {
      for (const cancel of document.querySelectorAll('[data-cancel-job]')) cancel.hidden = true;
      const finished = document.querySelector('[data-finished]');
      if (finished?.querySelector('.muted')) finished.textContent = 'just now';
      // What the ended job offers (changes, review, a deploy core allows) comes again from the page.
      document.getElementById('job-outcome')?.dispatchEvent(new Event('job-ended'));
    }
  };

  // The engine's "Plan: 1 to add, 0 to change, 0 to destroy." line (or the agent's "plan: …"), or "No changes.".
  const PLAN_LINE = /plan:(?: \d+ to import,)? (\d+) to add, (\d+) to change, (\d+) to destroy/i;
  const NO_CHANGES = /No changes\./;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour sequences start with ESC
  const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

  // Follows the job log over Server-Sent Events. A chunk whose id is not above the last one shown is
  // ignored, so a stream that resumes (Last-Event-ID, or ?after=) never leaves a gap or shows a line twice.
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

    const setState = (kind, text) =>
      state && Object.assign(state, { className: `stream-state ${kind}`, textContent: text });

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

  const log = document.getElementById('log');
  if (log?.dataset.stream) followLog(log);
}
