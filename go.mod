module github.com/ssgen/ssgen

go 1.24
