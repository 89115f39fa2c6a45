{{- define "type" -}}
{{- $type := .type -}}
{{- $gvid := .gvid -}}
{{- if markdownShouldRenderType $type -}}

#### {{ $type.Name }}
<a id="{{ $gvid }}-{{ lower $type.Name }}"></a>

{{ if $type.IsAlias }}_Underlying type:_ _{{ template "localLinks" (dict "gvid" $gvid "text" (markdownRenderTypeLink $type.UnderlyingType)) }}_{{ end }}

{{ $type.Doc }}

{{ if $type.Validation -}}
_Validation:_
{{- range $type.Validation }}
- {{ . }}
{{- end }}
{{- end }}

{{ if $type.References -}}
_Appears in:_
{{- range $type.SortedReferences }}
- {{ template "localLinks" (dict "gvid" $gvid "text" (markdownRenderTypeLink .)) }}
{{- end }}
{{- end }}

{{ if $type.Members -}}
| Field | Description | Default | Validation |
| --- | --- | --- | --- |
{{ if $type.GVK -}}
| `apiVersion` _string_ | `{{ $type.GVK.Group }}/{{ $type.GVK.Version }}` | | |
| `kind` _string_ | `{{ $type.GVK.Kind }}` | | |
{{ end -}}

{{ range $type.Members -}}
| `{{ .Name  }}` _{{ template "localLinks" (dict "gvid" $gvid "text" (markdownRenderType .Type)) }}_ | {{ template "type_members" . }} | {{ markdownRenderDefault .Default }} | {{ range .Validation -}} {{ markdownRenderFieldDoc . }} <br />{{ end }} |
{{ end -}}

{{ end -}}

{{ if $type.EnumValues -}}
| Value | Description |
| --- | --- |
{{ range $type.EnumValues -}}
| `{{ .Name }}` | {{ markdownRenderFieldDoc .Doc }} |
{{ end -}}
{{ end -}}


{{- end -}}
{{- end -}}
