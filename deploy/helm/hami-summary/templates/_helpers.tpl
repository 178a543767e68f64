{{/* Names and labels shared by every object of the chart. */}}

{{- define "hami-summary.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "hami-summary.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "hami-summary.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "hami-summary.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "hami-summary.selectorLabels" -}}
app.kubernetes.io/name: {{ include "hami-summary.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "hami-summary.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "hami-summary.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "hami-summary.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "hami-summary.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding the Slack credentials: the operator's own, or the chart's. */}}
{{- define "hami-summary.slackSecretName" -}}
{{- default (printf "%s-slack" (include "hami-summary.fullname" .)) .Values.slack.existingSecret -}}
{{- end -}}

{{- define "hami-summary.registryConfigMapName" -}}
{{- default (printf "%s-registry" (include "hami-summary.fullname" .)) .Values.existingRegistryConfigMap -}}
{{- end -}}

{{- define "hami-summary.hasRegistry" -}}
{{- if or .Values.registry .Values.existingRegistryConfigMap -}}true{{- end -}}
{{- end -}}

{{/* The port probes and metrics use: the HTTP port in HTTP mode, the side port in Socket Mode. */}}
{{- define "hami-summary.opsPortName" -}}
{{- if eq .Values.mode "socket" -}}ops{{- else -}}http{{- end -}}
{{- end -}}

{{- define "hami-summary.opsPort" -}}
{{- if eq .Values.mode "socket" -}}{{ .Values.ops.port }}{{- else -}}{{ .Values.http.port }}{{- end -}}
{{- end -}}
