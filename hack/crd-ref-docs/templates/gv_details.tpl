{{- define "gvDetails" -}}
{{- $gv := . -}}
{{- $gvid := markdownGroupVersionID $gv -}}

## {{ $gv.GroupVersionString }}

{{ $gv.Doc }}

{{- if $gv.Kinds  }}
### Resource Types
{{- range $gv.SortedKinds }}
- {{ template "localLinks" (dict "gvid" $gvid "text" ($gv.TypeForKind . | markdownRenderTypeLink)) }}
{{- end }}
{{ end }}

{{ range $gv.SortedTypes }}
{{ template "type" (dict "type" . "gvid" $gvid) }}
{{ end }}

{{- end -}}

{{- /* localLinks makes the links to this package's types point at their
anchors, which carry the group and version: several versions of a group
have types of the same name. */ -}}
{{- define "localLinks" -}}
{{- regexReplaceAll "\\]\\(#([a-z0-9-]+)\\)" .text (printf "](#%s-${1})" .gvid) -}}
{{- end -}}
