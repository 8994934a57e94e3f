module turnpike.dev/scripts/conformance-tables

go 1.26.0
