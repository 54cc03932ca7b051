{{/* Chart name. */}}
{{- define "trellis.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Resource name prefix: the release name, with the chart name unless the release already says it. */}}
{{- define "trellis.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "trellis.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "trellis.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Selector labels of one component (server, agent, migrate): pass (dict "root" $ "component" "server"). */}}
{{- define "trellis.selectorLabels" -}}
app.kubernetes.io/name: {{ include "trellis.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "trellis.image" -}}
{{- printf "%s:%s" .image.repository (default .root.Chart.AppVersion .image.tag) }}
{{- end }}

{{/* An env entry read from a Secret: (dict "root" $ "name" "CLI_JWT_SECRET" "ref" .Values.secrets.cliJwtSecret "optional" false). */}}
{{- define "trellis.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ default .root.Values.secrets.existingSecret .ref.secretName | required (printf "secrets.existingSecret or a secretName for %s is required" .name) }}
      key: {{ .ref.key | required (printf "the Secret key of %s is required" .name) }}
      {{- if .optional }}
      optional: true
      {{- end }}
{{- end }}

{{/* The public origin (TRELLIS_WEB_URL), or nothing. */}}
{{- define "trellis.publicUrl" -}}
{{- if .Values.server.publicUrl }}
{{- .Values.server.publicUrl }}
{{- else if and .Values.ingress.enabled .Values.ingress.hosts }}
{{- printf "%s://%s" (ternary "https" "http" (ne .Values.ingress.tlsSecretName "")) (first .Values.ingress.hosts) }}
{{- end }}
{{- end }}

{{/* Rendering stops here when the values cannot make a working deployment. */}}
{{- define "trellis.validate" -}}
{{- $db := .Values.database.type }}
{{- if not (has $db (list "postgres" "sqlite")) }}
{{- fail (printf "database.type must be postgres or sqlite (got %q)" $db) }}
{{- end }}
{{- if and .Values.server.enabled (gt (int .Values.server.replicas) 1) (ne $db "postgres") }}
{{- fail (printf "server.replicas is %d but database.type is %s: several replicas need Postgres. Set database.type=postgres (DATABASE_URL in secrets.databaseUrl) or server.replicas=1." (int .Values.server.replicas) $db) }}
{{- end }}
{{- if and .Values.server.enabled (gt (int .Values.server.replicas) 1) (not (regexMatch "^(s3|gs)://" (toString .Values.artifacts.url))) }}
{{- fail (printf "server.replicas is %d but artifacts.url is %q: several replicas need object storage (s3://bucket/prefix or gs://bucket/prefix) for plans and state." (int .Values.server.replicas) (toString .Values.artifacts.url)) }}
{{- end }}
{{- if not (has .Values.agent.onShutdown (list "cancel" "finish")) }}
{{- fail (printf "agent.onShutdown must be cancel or finish (got %q)" .Values.agent.onShutdown) }}
{{- end }}
{{- if and .Values.agent.enabled (not (kindIs "invalid" .Values.agent.terminationGracePeriodSeconds)) (le (int .Values.agent.terminationGracePeriodSeconds) (int .Values.agent.cancelGraceSeconds)) }}
{{- fail (printf "agent.terminationGracePeriodSeconds (%d) must exceed agent.cancelGraceSeconds (%d), or Kubernetes kills the engine before it releases its state lock." (int .Values.agent.terminationGracePeriodSeconds) (int .Values.agent.cancelGraceSeconds)) }}
{{- end }}
{{- end }}

{{/* The server's environment, shared by the Deployment and the migration Job. */}}
{{- define "trellis.serverEnv" -}}
- name: HOST
  value: "0.0.0.0"
- name: PORT
  value: "8080"
- name: TRELLIS_DATA_DIR
  value: /var/lib/trellis
{{- if eq .Values.database.type "postgres" }}
{{ include "trellis.secretEnv" (dict "root" . "name" "DATABASE_URL" "ref" .Values.secrets.databaseUrl) }}
- name: TRELLIS_DB_POOL_MAX
  value: {{ .Values.server.databasePoolMax | quote }}
{{- /* The pre-install/pre-upgrade Job is the only thing that changes the schema. */}}
- name: TRELLIS_MIGRATE_ON_START
  value: "false"
{{- end }}
{{- with .Values.artifacts.url }}
- name: TRELLIS_ARTIFACTS_URL
  value: {{ . | quote }}
{{- end }}
{{- with (include "trellis.publicUrl" .) }}
- name: TRELLIS_WEB_URL
  value: {{ . | quote }}
{{- end }}
- name: TRELLIS_TRUST_PROXY
  value: {{ .Values.server.trustProxy | default (ternary "1" "false" .Values.ingress.enabled) | toString | quote }}
- name: TRELLIS_LOG_LEVEL
  value: {{ .Values.server.logLevel | quote }}
{{ include "trellis.secretEnv" (dict "root" . "name" "CLI_JWT_SECRET" "ref" .Values.secrets.cliJwtSecret) }}
{{ include "trellis.secretEnv" (dict "root" . "name" "TRELLIS_ENCRYPTION_KEY" "ref" .Values.secrets.encryptionKey "optional" true) }}
{{ include "trellis.secretEnv" (dict "root" . "name" "RELEASE_API_SECRET" "ref" .Values.secrets.releaseApiSecret "optional" true) }}
{{ include "trellis.secretEnv" (dict "root" . "name" "TRELLIS_BOOTSTRAP_TOKEN" "ref" .Values.secrets.bootstrapToken "optional" true) }}
{{- range $provider := list "github" "gitlab" "bitbucket" "google" }}
{{- $app := index $.Values.oauth $provider }}
{{- if $app.enabled }}
{{- $upper := upper $provider }}
{{ include "trellis.secretEnv" (dict "root" $ "name" (printf "TRELLIS_%s_CLIENT_ID" $upper) "ref" (dict "secretName" $app.secretName "key" $app.clientIdKey)) }}
{{ include "trellis.secretEnv" (dict "root" $ "name" (printf "TRELLIS_%s_CLIENT_SECRET" $upper) "ref" (dict "secretName" $app.secretName "key" $app.clientSecretKey)) }}
{{- with $app.baseUrl }}
- name: {{ printf "TRELLIS_%s_BASE_URL" $upper }}
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- if .Values.metrics.enabled }}
{{- if gt (int .Values.metrics.port) 0 }}
- name: TRELLIS_METRICS_PORT
  value: {{ .Values.metrics.port | quote }}
{{- else }}
{{ include "trellis.secretEnv" (dict "root" . "name" "TRELLIS_METRICS_TOKEN" "ref" .Values.metrics.token) }}
{{- end }}
{{- end }}
{{- with .Values.server.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}
