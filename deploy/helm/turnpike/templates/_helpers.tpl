{{/* The controller's arguments, from the values. */}}
{{- define "turnpike.args" -}}
{{- $ns := .Release.Namespace -}}
- run
- --in-cluster
- --xds-address
- {{ .Values.xds.address | quote }}
- --xds-public-address
- {{ .Values.xds.publicAddress | default (printf "turnpike.%s.svc:18000" $ns) | quote }}
- --health-address
- {{ .Values.health.address | quote }}
- --plugin-address
- {{ .Values.plugins.address | quote }}
- --plugin-public-url
- {{ .Values.plugins.publicUrl | default (printf "https://turnpike.%s.svc:18002" $ns) | quote }}
- --leader-election-namespace
- {{ $ns | quote }}
- --proxy-placement
- {{ .Values.proxyPlacement | quote }}
- --proxy-drain-image
- {{ printf "%s:%s" .Values.image.repository .Values.image.tag | quote }}
- --log-level
- {{ .Values.logLevel | quote }}
- --xds-trust-domain
- {{ .Values.xds.trustDomain | quote }}
- --xds-ca-validity
- {{ .Values.xds.caValidity | quote }}
- --xds-cert-validity
- {{ .Values.xds.certValidity | quote }}
{{- with .Values.plugins.registries }}
- --plugin-registries
- {{ join "," . | quote }}
{{- end }}
{{- if .Values.recorder.enabled }}
- --record-dir
- /var/lib/turnpike/events
- --record-retain-bytes
- {{ .Values.recorder.retainBytes | quote }}
- --record-retain-age
- {{ .Values.recorder.retainAge | quote }}
- --record-segment-bytes
- {{ .Values.recorder.segmentBytes | quote }}
{{- end }}
{{- if not .Values.leaderElection.enabled }}
- --no-leader-elect
{{- end }}
{{- range .Values.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}
