{{/* Chart name, truncated to a DNS label. */}}
{{- define "skybridge.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Release-qualified name; components append -proxy / -operator, so 54 characters leave room. */}}
{{- define "skybridge.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 54 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 54 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 54 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "skybridge.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "skybridge.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: skybridge
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels of one component: (dict "ctx" $ "component" "proxy"). */}}
{{- define "skybridge.selectorLabels" -}}
app.kubernetes.io/name: {{ include "skybridge.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "skybridge.componentLabels" -}}
{{ include "skybridge.labels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "skybridge.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{- define "skybridge.configNamespace" -}}
{{- .Values.configNamespace | default .Release.Namespace -}}
{{- end -}}

{{- define "skybridge.proxy.serviceAccountName" -}}
{{- if .Values.proxy.serviceAccount.create -}}
{{- .Values.proxy.serviceAccount.name | default (printf "%s-proxy" (include "skybridge.fullname" .)) -}}
{{- else -}}
{{- .Values.proxy.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{- define "skybridge.operator.serviceAccountName" -}}
{{- if .Values.operator.serviceAccount.create -}}
{{- .Values.operator.serviceAccount.name | default (printf "%s-operator" (include "skybridge.fullname" .)) -}}
{{- else -}}
{{- .Values.operator.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/* The operator's leader Lease, one per release. */}}
{{- define "skybridge.leaseName" -}}
{{- printf "%s-operator" (include "skybridge.fullname" .) -}}
{{- end -}}

{{- define "skybridge.redisSecretName" -}}
{{- .Values.redis.existingSecret | default (printf "%s-redis" (include "skybridge.fullname" .)) -}}
{{- end -}}

{{- define "skybridge.redisSecretKey" -}}
{{- if .Values.redis.existingSecret -}}{{ .Values.redis.existingSecretPasswordKey }}{{- else -}}password{{- end -}}
{{- end -}}

{{/* Namespaces the operator reads custom resources in besides the configuration namespace (not "*"). */}}
{{- define "skybridge.extraWatchNamespaces" -}}
{{- $config := include "skybridge.configNamespace" . -}}
{{- $out := list -}}
{{- range .Values.operator.watchNamespaces -}}
{{- if and (ne . "*") (ne . $config) -}}{{- $out = append $out . -}}{{- end -}}
{{- end -}}
{{- $out | uniq | join "," -}}
{{- end -}}

{{- define "skybridge.watchAll" -}}
{{- if has "*" .Values.operator.watchNamespaces -}}true{{- end -}}
{{- end -}}

{{/* The operator's rights on the custom resources (read specs, write status) and Events about them. */}}
{{/* The conversion webhook's certificate Secret: the user's, or the one Helm generates. */}}
{{- define "skybridge.conversionSecretName" -}}
{{- .Values.operator.conversionWebhook.existingSecret | default (printf "%s-operator-conversion-tls" (include "skybridge.fullname" .)) -}}
{{- end -}}

{{/* The CRDs of every kind (the operator sets their conversion webhook), by name. */}}
{{- define "skybridge.crdNames" -}}
{{- $names := list -}}
{{- range (include "skybridge.crPlurals" . | splitList ",") -}}
{{- $names = append $names (printf "%s.gateway.skybridge.dev" .) -}}
{{- end -}}
{{- join ", " $names -}}
{{- end -}}

{{/* Plurals of the gateway.skybridge.dev kinds (operator/src/resources/kinds.ts; helm.test.ts checks they agree). */}}
{{- define "skybridge.crPlurals" -}}
providers,virtualkeys,routingrules,webhooks,mcpclients,cachepolicies,teams,customers
{{- end -}}

{{- define "skybridge.operatorCrRules" -}}
- apiGroups: [gateway.skybridge.dev]
  resources: [providers, virtualkeys, routingrules, webhooks, mcpclients, cachepolicies, teams, customers]
  verbs: [get, list, watch]
- apiGroups: [gateway.skybridge.dev]
  resources: [providers/status, virtualkeys/status, routingrules/status, webhooks/status, mcpclients/status, cachepolicies/status, teams/status, customers/status]
  verbs: [get, patch, update]
# get: an Event is named after its problem, so a new leader finds the series instead of adding one.
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [get, create, patch]
{{- end -}}

{{/* config.json's vector_store section for SKYBRIDGE_VECTOR_STORE; a Secret's password by env reference. */}}
{{- define "skybridge.vectorStoreJson" -}}
{{- $config := deepCopy .Values.vectorStore.config -}}
{{- if .Values.vectorStore.existingSecret -}}
{{- $_ := set $config "password" "env.SKYBRIDGE_VECTOR_STORE_PASSWORD" -}}
{{- end -}}
{{- dict "enabled" true "type" .Values.vectorStore.type "config" $config | toJson -}}
{{- end -}}

{{/* A Gateway API duration (1h, 30s, 1m30s, 500ms) in milliseconds. */}}
{{- define "skybridge.durationMs" -}}
{{- $units := dict "h" 3600000 "m" 60000 "s" 1000 "ms" 1 -}}
{{- $total := 0 -}}
{{- range regexFindAll "[0-9]+(ms|h|m|s)" . -1 -}}
{{- $digits := regexFind "^[0-9]+" . -}}
{{- $total = add $total (mul (atoi $digits) (get $units (trimPrefix $digits .))) -}}
{{- end -}}
{{- $total -}}
{{- end -}}
