{{/* The name every object of the release starts with. */}}
{{- define "inbox.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "inbox.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "inbox.secretName" -}}
{{- if .Values.secret.create -}}
{{ include "inbox.fullname" . }}
{{- else -}}
{{ .Values.secret.existingSecret }}
{{- end -}}
{{- end -}}

{{/* The environment every process shares: settings, then each secret from the Secret. */}}
{{- define "inbox.env" -}}
- name: NODE_ENV
  value: production
- name: HOST
  value: 0.0.0.0
- name: INBOX_PUBLIC_URL
  value: {{ .Values.publicUrl | quote }}
- name: INBOX_MIGRATE_ON_START
  value: "false"
{{- range $name, $value := .Values.env }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- range $name := list "DATABASE_URL" "INBOX_JWT_SECRET" "INBOX_SECRET_KEY" "INBOX_ADMIN_API_KEY" "INBOX_METRICS_TOKEN" }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ include "inbox.secretName" $ }}
      key: {{ $name }}
      optional: {{ eq $name "INBOX_METRICS_TOKEN" }}
{{- end }}
{{- end -}}
