# syntax=docker/dockerfile:1
# trellis-agent with OpenTofu. Build from the repository root:
#   docker build -f deploy/docker/agent.Dockerfile --build-arg TOFU_VERSION=1.12.6 -t trellis-agent:0.1.0 .
# Runs as uid 10001 on a read-only root file system: jobs work in TRELLIS_AGENT_WORK_DIR (/work)
# and the engine's caches go under HOME (/tmp), both meant to be volumes.

ARG NODE_IMAGE=node:22-bookworm-slim
# The OpenTofu release in the image; its zip is checked against the release's SHA256SUMS, and
# against TOFU_SHA256 (the linux zip's sha256) when given.
ARG TOFU_VERSION=1.12.6
ARG TOFU_SHA256=""
# Open Policy Agent, which evaluates plan policies (docs/policies.md); checked like OpenTofu.
ARG OPA_VERSION=1.22.2
ARG OPA_SHA256=""

# 1. Build: every workspace compiled with tsc, the agent's packages packed as npm tarballs.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json tsconfig.json tsconfig.base.json ./
COPY packages/ packages/
RUN npm ci --no-audit --no-fund --ignore-scripts
RUN npx tsc -b packages/agent
RUN mkdir /tarballs \
 && npm pack --pack-destination /tarballs \
      --workspace @trellis/core --workspace @trellis/contract --workspace @trellis/client \
      --workspace @trellis/agent

# 2. Engines: OpenTofu and OPA downloaded for the target architecture and checksum-verified.
FROM ${NODE_IMAGE} AS engines
ARG TARGETARCH=amd64
ARG TOFU_VERSION
ARG TOFU_SHA256
ARG OPA_VERSION
ARG OPA_SHA256
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl unzip \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /engines
RUN set -eu; \
    zip="tofu_${TOFU_VERSION}_linux_${TARGETARCH}.zip"; \
    base="https://github.com/opentofu/opentofu/releases/download/v${TOFU_VERSION}"; \
    curl -fsSLO "${base}/${zip}"; \
    curl -fsSLO "${base}/tofu_${TOFU_VERSION}_SHA256SUMS"; \
    grep " ${zip}\$" "tofu_${TOFU_VERSION}_SHA256SUMS" | sha256sum -c -; \
    if [ -n "${TOFU_SHA256}" ]; then echo "${TOFU_SHA256}  ${zip}" | sha256sum -c -; fi; \
    unzip -q "${zip}" tofu; \
    rm -f "${zip}" "tofu_${TOFU_VERSION}_SHA256SUMS"; \
    ./tofu version
RUN set -eu; \
    bin="opa_linux_${TARGETARCH}_static"; \
    base="https://github.com/open-policy-agent/opa/releases/download/v${OPA_VERSION}"; \
    curl -fsSLo opa "${base}/${bin}"; \
    expected="$(curl -fsSL "${base}/${bin}.sha256" | cut -d' ' -f1)"; \
    echo "${expected}  opa" | sha256sum -c -; \
    if [ -n "${OPA_SHA256}" ]; then echo "${OPA_SHA256}  opa" | sha256sum -c -; fi; \
    chmod 0755 opa; \
    ./opa version

# 3. Production dependencies only.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY --from=build /tarballs /tarballs
RUN echo '{"name":"trellis-agent-image","private":true,"type":"module"}' > package.json \
 && npm install --omit=dev --no-audit --no-fund /tarballs/*.tgz \
 && rm -rf /tarballs /root/.npm

# 4. Runtime: node, git (vine sources), the engines and the installed packages.
FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git openssh-client \
 && rm -rf /var/lib/apt/lists/*
COPY --from=engines /engines/tofu /engines/opa /usr/local/bin/
ENV NODE_ENV=production \
    PATH=/app/node_modules/.bin:$PATH \
    HOME=/tmp \
    TRELLIS_AGENT_WORK_DIR=/work
WORKDIR /app
COPY --from=deps /app /app
RUN mkdir -p /work && chown 10001:10001 /work
USER 10001:10001
VOLUME ["/work", "/tmp"]
ENTRYPOINT ["trellis-agent"]
CMD ["run"]
