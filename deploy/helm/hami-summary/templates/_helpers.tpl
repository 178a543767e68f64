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

{{/* The image reference: by digest when one is given, else by tag (default: appVersion). */}}
{{- define "hami-summary.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/*
Names of the RBAC objects. They carry the release namespace: ClusterRoles are cluster-wide and
Roles land in HAMi's namespaces, so two releases of one name in two namespaces must differ.
*/}}
{{- define "hami-summary.rbacName" -}}
{{- printf "%s-%s" (include "hami-summary.fullname" .) .Release.Namespace -}}
{{- end -}}

{{/* The namespaces HAMi runs in, as a JSON list (rbac.hamiNamespace, deprecated, wins). */}}
{{- define "hami-summary.hamiNamespaces" -}}
{{- if .Values.rbac.hamiNamespace -}}
{{- list .Values.rbac.hamiNamespace | toJson -}}
{{- else -}}
{{- .Values.rbac.hamiNamespaces | default list | uniq | toJson -}}
{{- end -}}
{{- end -}}

{{/* Whether the pod needs this cluster's API (an in_cluster registry entry, or a registry the chart cannot see). */}}
{{- define "hami-summary.usesInClusterApi" -}}
{{- $uses := .Values.existingRegistryConfigMap -}}
{{- range (.Values.registry.clusters | default list) -}}
{{- if and (kindIs "map" .) .in_cluster -}}{{- $uses = true -}}{{- end -}}
{{- end -}}
{{- if $uses -}}true{{- end -}}
{{- end -}}

{{- define "hami-summary.automountToken" -}}
{{- $mode := toString .Values.serviceAccount.automountToken -}}
{{- if eq $mode "auto" -}}
{{- if include "hami-summary.usesInClusterApi" . -}}true{{- else -}}false{{- end -}}
{{- else -}}
{{- $mode -}}
{{- end -}}
{{- end -}}

{{/*
The registry document written to the ConfigMap. With namespaced RBAC made by the chart, the bot
may only list pods and services in rbac.hamiNamespaces, so an in_cluster entry must search one
of them: an entry without hami_namespace gets the only one, and any other is refused here rather
than failing with 403 at the first question.
*/}}
{{- define "hami-summary.registryDocument" -}}
{{- $registry := deepCopy .Values.registry -}}
{{- if and .Values.rbac.create (not .Values.rbac.clusterWide) -}}
{{- $namespaces := include "hami-summary.hamiNamespaces" . | fromJsonArray -}}
{{- range $entry := ($registry.clusters | default list) -}}
{{- if and (kindIs "map" $entry) $entry.in_cluster -}}
{{- if not $entry.hami_namespace -}}
{{- if ne (len $namespaces) 1 -}}
{{- fail (printf "registry cluster %q is in_cluster without hami_namespace, but rbac.hamiNamespaces lists %d namespaces (%s): set hami_namespace on the entry to one of them, or set rbac.clusterWide: true to let it search every namespace." (toString $entry.name) (len $namespaces) (join ", " $namespaces)) -}}
{{- end -}}
{{- $_ := set $entry "hami_namespace" (first $namespaces) -}}
{{- else if not (has $entry.hami_namespace $namespaces) -}}
{{- fail (printf "registry cluster %q has hami_namespace %q, where the chart grants no rights: add it to rbac.hamiNamespaces (now: %s), or set rbac.clusterWide: true." (toString $entry.name) $entry.hami_namespace (join ", " $namespaces)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- /*
Pending pods: where the chart grants them only in pendingPods.namespaces, an in_cluster entry
reads only those (a cluster-wide list would be refused with a 403), and one naming another
namespace is refused here rather than at the first question.
*/ -}}
{{- if and .Values.rbac.create .Values.pendingPods.enabled .Values.pendingPods.namespaces -}}
{{- $podNamespaces := .Values.pendingPods.namespaces | uniq | sortAlpha -}}
{{- range $entry := ($registry.clusters | default list) -}}
{{- if and (kindIs "map" $entry) $entry.in_cluster -}}
{{- if not $entry.pod_namespaces -}}
{{- $_ := set $entry "pod_namespaces" $podNamespaces -}}
{{- else -}}
{{- range (kindIs "string" $entry.pod_namespaces | ternary (list $entry.pod_namespaces) $entry.pod_namespaces) -}}
{{- if not (has . $podNamespaces) -}}
{{- fail (printf "registry cluster %q has %q in pod_namespaces, where the chart grants no pod reads: add it to pendingPods.namespaces (now: %s), or remove it from the entry." (toString $entry.name) . (join ", " $podNamespaces)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toYaml $registry -}}
{{- end -}}

{{/* The most replicas the release can run: what the Redis and Socket Mode limits apply to. */}}
{{- define "hami-summary.maxReplicas" -}}
{{- if .Values.autoscaling.enabled -}}{{ .Values.autoscaling.maxReplicas }}{{- else -}}{{ .Values.replicaCount }}{{- end -}}
{{- end -}}
