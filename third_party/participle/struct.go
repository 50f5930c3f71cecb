package participle

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"text/scanner"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2/lexer"
)

// A structLexer lexes over the tags of struct fields while tracking the current field.
type structLexer struct {
	s       reflect.Type
	field   int
	indexes [][]int
	lexer   *tagTokens
	// The lexer of a later field's tag that Peek looked into, kept for
	// the next Peek and Next (nextField is 0 when there is none).
	nextField int
	nextLexer *tagTokens
}

func (s *structLexer) fieldLexer(field int) (*tagTokens, error) {
	if s.nextField == field && s.nextLexer != nil {
		return s.nextLexer, nil
	}
	ft := s.GetField(field).StructField
	lex, err := lexTag(ft.Name, fieldLexerTag(ft))
	if err != nil {
		return lex, err
	}
	s.nextField, s.nextLexer = field, lex
	return lex, nil
}

func lexStruct(s reflect.Type) (*structLexer, error) {
	indexes, err := collectFieldIndexes(s)
	if err != nil {
		return nil, err
	}
	slex := &structLexer{
		s:       s,
		indexes: indexes,
	}
	if len(slex.indexes) > 0 {
		tag := fieldLexerTag(slex.Field().StructField)
		slex.lexer, err = lexTag(s.Name(), tag)
		if err != nil {
			return nil, err
		}
	}
	return slex, nil
}

// NumField returns the number of fields in the struct associated with this structLexer.
func (s *structLexer) NumField() int {
	return len(s.indexes)
}

type structLexerField struct {
	reflect.StructField
	Index []int
}

// Field returns the field associated with the current token.
func (s *structLexer) Field() structLexerField {
	return s.GetField(s.field)
}

func (s *structLexer) GetField(field int) structLexerField {
	if field >= len(s.indexes) {
		field = len(s.indexes) - 1
	}
	return structLexerField{
		StructField: s.s.FieldByIndex(s.indexes[field]),
		Index:       s.indexes[field],
	}
}

func (s *structLexer) Peek() (*lexer.Token, error) {
	field := s.field
	lex := s.lexer
	for {
		token := lex.Peek()
		if !token.EOF() {
			token.Pos.Line = field + 1
			return token, nil
		}
		field++
		if field >= s.NumField() {
			return token, nil // the last tag's EOF token, lexer.EOFToken(token.Pos)
		}
		var err error
		lex, err = s.fieldLexer(field)
		if err != nil {
			return token, err
		}
	}
}

func (s *structLexer) Next() (*lexer.Token, error) {
	token := s.lexer.Next()
	if !token.EOF() {
		token.Pos.Line = s.field + 1
		return token, nil
	}
	if s.field+1 >= s.NumField() {
		return token, nil // the last tag's EOF token, lexer.EOFToken(token.Pos)
	}
	s.field++
	done := s.lexer
	var err error
	s.lexer, err = s.fieldLexer(s.field)
	if err != nil {
		return token, err
	}
	s.nextLexer = nil
	freeTagTokens.Put(done)
	return s.Next()
}

func fieldLexerTag(field reflect.StructField) string {
	if tag, ok := field.Tag.Lookup("parser"); ok {
		return tag
	}
	return string(field.Tag)
}

// Recursively collect flattened indices for top-level fields and embedded fields.
func collectFieldIndexes(s reflect.Type) (out [][]int, err error) {
	if s.Kind() != reflect.Struct {
		return nil, fmt.Errorf("expected a struct but got %q", s)
	}
	defer decorate(&err, s.String)
	for i := 0; i < s.NumField(); i++ {
		f := s.Field(i)
		switch {
		case f.Anonymous && f.Type.Kind() == reflect.Struct: // Embedded struct.
			children, err := collectFieldIndexes(f.Type)
			if err != nil {
				return nil, err
			}
			for _, idx := range children {
				out = append(out, append(f.Index, idx...))
			}

		case f.PkgPath != "":
			continue

		case fieldLexerTag(f) != "":
			out = append(out, f.Index)
		}
	}
	return
}

// tagLexer is a Lexer based on text/scanner.Scanner
type tagLexer struct {
	tag      string // the text scanner reads
	scanner  *scanner.Scanner
	filename string
	err      error
}

// tagScanners hold the tag lexers, text/scanners (each with a 1 kB
// buffer) and readers that lexTag lexes tags with.
var tagScanners = sync.Pool{New: func() any {
	ts := new(tagScanner)
	ts.l.scanner = &ts.s
	ts.onError = ts.l.scanError
	return ts
}}

type tagScanner struct {
	l       tagLexer
	s       scanner.Scanner
	r       strings.Reader
	onError func(*scanner.Scanner, string)
}

// lexTag lexes a field's tag whole, with a lexer from tagScanners, into
// tagTokens from freeTagTokens.
func lexTag(filename, tag string) (*tagTokens, error) {
	ts := tagScanners.Get().(*tagScanner)
	defer tagScanners.Put(ts)
	ts.r.Reset(tag)
	ts.s.Init(&ts.r)
	ts.s.Error = ts.onError
	lex := &ts.l
	lex.tag, lex.filename, lex.err = tag, filename, nil
	tt := freeTagTokens.Get().(*tagTokens)
	tt.tokens, tt.cursor = tt.tokens[:0], 0
	for {
		t, err := lex.Next()
		if err != nil {
			freeTagTokens.Put(tt)
			return nil, err
		}
		tt.tokens = append(tt.tokens, t)
		if t.EOF() {
			return tt, nil
		}
	}
}

// tagTokens are the tokens of a tag, ending in EOF, as a PeekingLexer
// with nothing elided hands them out. Once the struct lexer is done with
// a tag (structLexer.Next has left its field, or release), they go back to
// freeTagTokens for another tag: a token from Peek or Next is valid until
// then.
type tagTokens struct {
	tokens []lexer.Token
	cursor int
}

var freeTagTokens = sync.Pool{New: func() any { return new(tagTokens) }}

// release puts the struct lexer's tokens back in freeTagTokens, when the
// struct's grammar has been read.
func (s *structLexer) release() {
	if s.nextLexer != nil && s.nextLexer != s.lexer {
		freeTagTokens.Put(s.nextLexer)
	}
	if s.lexer != nil {
		freeTagTokens.Put(s.lexer)
	}
	s.lexer, s.nextLexer = nil, nil
}

func (t *tagTokens) Peek() *lexer.Token { return &t.tokens[t.cursor] }

func (t *tagTokens) Next() *lexer.Token {
	tok := &t.tokens[t.cursor]
	if !tok.EOF() {
		t.cursor++
	}
	return tok
}

func (t *tagLexer) scanError(s *scanner.Scanner, msg string) {
	// This is to support single quoted strings. Hacky.
	if !strings.HasSuffix(msg, "char literal") {
		t.err = fmt.Errorf("%s: %s", t.scanner.Pos(), msg)
	}
}

func (t *tagLexer) Next() (lexer.Token, error) {
	typ := t.scanner.Scan()
	var text string
	if end := t.scanner.Pos().Offset; typ != scanner.EOF && end <= len(t.tag) {
		text = t.tag[t.scanner.Position.Offset:end] // TokenText, without a copy
	} else {
		text = t.scanner.TokenText()
	}
	pos := lexer.Position(t.scanner.Position)
	pos.Filename = t.filename
	if t.err != nil {
		return lexer.Token{}, t.err
	}
	return textScannerTransform(lexer.Token{
		Type:  lexer.TokenType(typ),
		Value: text,
		Pos:   pos,
	})
}

func textScannerTransform(token lexer.Token) (lexer.Token, error) {
	// Unquote strings.
	switch token.Type {
	case scanner.Char:
		// FIXME(alec): This is pretty hacky...we convert a single quoted char into a double
		// quoted string in order to support single quoted strings.
		token.Value = "\"" + token.Value[1:len(token.Value)-1] + "\""
		fallthrough
	case scanner.String:
		s, err := strconv.Unquote(token.Value)
		if err != nil {
			return lexer.Token{}, Errorf(token.Pos, "%s: %q", err.Error(), token.Value)
		}
		token.Value = s
		if token.Type == scanner.Char && utf8.RuneCountInString(s) > 1 {
			token.Type = scanner.String
		}
	case scanner.RawString:
		token.Value = token.Value[1 : len(token.Value)-1]

	default:
	}
	return token, nil
}
