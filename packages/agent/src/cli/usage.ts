export const USAGE = `trellis-agent: runs OpenTofu/Terraform jobs of a Trellis control plane on this machine

Usage:
  trellis-agent register --name <name> [--url <url>] [--credentials-file <path>] [--force]
  trellis-agent run [options]
  trellis-agent --version | --help

register
  Registers this machine as an agent of the signed-in user and stores the worker id and token in
  the credentials file (mode 0600). Uses TRELLIS_TOKEN (a CLI access token) when set, else the
  login of the \`trellis\` CLI ($XDG_CONFIG_HOME/trellis/auth.json).
    --name <name>             the agent's name (required)
    --url <url>               control plane address (default: TRELLIS_URL, else the CLI login's)
    --credentials-file <path> default: TRELLIS_AGENT_CREDENTIALS or ~/.config/trellis/agent.json
    --force                   replace an existing credentials file

run
  The daemon: heartbeats, claims jobs and runs them until SIGTERM or SIGINT.
    --url <url>                  TRELLIS_URL (else the credentials file's)
    --worker-id <id>             TRELLIS_WORKER_ID (else the credentials file's)
    --worker-token <token>       TRELLIS_WORKER_TOKEN (else the credentials file's; prefer the env)
    --credentials-file <path>    where \`register\` wrote them
    --engine-bin <path|name>     TRELLIS_ENGINE_BIN; default tofu or terraform (per job) from PATH
    --concurrency <n>            TRELLIS_AGENT_CONCURRENCY; jobs at once (default 1)
    --work-dir <dir>             TRELLIS_AGENT_WORK_DIR; job workspaces (default a temp dir)
    --once                       claim and run at most one job, then exit (for CI)
    --claim-wait <s>             long-poll of one claim, 0-30 (default 30)
    --heartbeat-interval <s>     TRELLIS_AGENT_HEARTBEAT_INTERVAL_S (default: as the server says, 30)
    --cancel-grace <s>           TRELLIS_AGENT_CANCEL_GRACE_S; SIGINT → SIGKILL delay (default 60)
    --lock-timeout <s>           TRELLIS_AGENT_LOCK_TIMEOUT_S; wait for a held state lock (default 120)
    --on-shutdown finish|cancel  TRELLIS_AGENT_ON_SHUTDOWN; on SIGTERM, finish or cancel running
                                 jobs (default finish; a second signal cancels)
    --log-level <level>          TRELLIS_AGENT_LOG_LEVEL: debug, info, warn, error, silent

Exit codes: 0 stopped cleanly (or --once: no job, or the job succeeded); 1 --once: the job failed,
was cancelled or lost; 2 usage error; 3 configuration or credentials refused.
`;
