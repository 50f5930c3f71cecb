module github.com/alecthomas/participle/v2

go 1.18
