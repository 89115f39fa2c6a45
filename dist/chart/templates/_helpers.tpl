{{/*
Object names are fixed: the manager's flag defaults name the certificate
Secret, the webhook Service and the webhook configurations after the
kustomize prefix "sunstrider-operator-".
*/}}
{{- define "so.name" -}}
sunstrider-operator-{{ . }}
{{- end }}

{{- define "so.selectorLabels" -}}
control-plane: controller-manager
app.kubernetes.io/name: sunstrider-operator
{{- end }}

{{- define "so.labels" -}}
app.kubernetes.io/name: sunstrider-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
app.kubernetes.io/part-of: sunstrider-operator
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{/* The manager's ServiceAccount: serviceAccount.name, else the fixed name. */}}
{{- define "so.serviceAccountName" -}}
{{- .Values.serviceAccount.name | default (include "so.name" "controller-manager") -}}
{{- end }}

{{- define "so.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if contains "@" .Values.image.repository -}}
{{ .Values.image.repository }}
{{- else -}}
{{ .Values.image.repository }}:{{ $tag }}
{{- end -}}
{{- end }}

{{/* Fails on an unknown certManagement. */}}
{{- define "so.certManager" -}}
{{- if not (has .Values.certManagement (list "self" "cert-manager")) -}}
{{- fail (printf "certManagement must be self or cert-manager, not %q" .Values.certManagement) -}}
{{- end -}}
{{- if and .Values.webhook.enabled (eq .Values.certManagement "cert-manager") -}}
true
{{- end -}}
{{- end }}

{{- define "so.injectCAFrom" -}}
{{ .Release.Namespace }}/{{ include "so.name" "serving-cert" }}
{{- end }}

{{/*
so.generated parses one file of files/generated (written by
hack/sync-chart-crds.sh from `kustomize build config/default`), adds the
chart's labels and returns it as a dict in .out (call with
dict "ctx" $ "path" $path "out" (dict)).
*/}}
{{- define "so.generated" -}}
{{- $obj := .ctx.Files.Get .path | fromYaml -}}
{{- if or (hasKey $obj "Error") (not (hasKey $obj "kind")) -}}
{{- fail (printf "%s: %v" .path (get $obj "Error")) -}}
{{- end -}}
{{- $labels := default dict $obj.metadata.labels -}}
{{- $_ := set $obj.metadata "labels" (merge (include "so.labels" .ctx | fromYaml) $labels) -}}
{{- $_ := set .out "obj" $obj -}}
{{- end }}
