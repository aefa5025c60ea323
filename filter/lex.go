package filter

import "fmt"

// SyntaxError is an expression that does not compile: Col is the 1-based
// column (in bytes) of the token at fault.
type SyntaxError struct {
	Expr string
	Col  int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("column %d: %s", e.Col, e.Msg) }

// Caret returns the expression and, below it, a caret under the column at
// fault, for a terminal.
func (e *SyntaxError) Caret() string {
	n := min(max(e.Col-1, 0), len(e.Expr))
	pad := make([]byte, n)
	for i := range pad {
		pad[i] = ' '
		if e.Expr[i] == '\t' {
			pad[i] = '\t'
		}
	}
	return e.Expr + "\n" + string(pad) + "^"
}

// tokKind is a token's kind.
type tokKind uint8

const (
	tokEOF    tokKind = iota
	tokWord           // a field name, a keyword or a bare value (10.0.0.1, RC_SEND_ONLY, 0x11)
	tokString         // "quoted"
	tokOp             // == != < <= > >=
	tokAnd            // &&
	tokOr             // ||
	tokNot            // !
	tokLParen
	tokRParen
	tokLBrace
	tokRBrace
	tokComma
)

type token struct {
	kind tokKind
	text string // the word, the string's contents, the operator
	col  int    // 1-based
}

// maxExprBytes bounds an expression: past it, a slip (a file given as the
// expression) rather than a selection.
const maxExprBytes = 64 << 10

// lex splits expr into tokens.
func lex(expr string) ([]token, error) {
	if len(expr) > maxExprBytes {
		return nil, &SyntaxError{expr, 1, fmt.Sprintf("expression of %d bytes, more than %d", len(expr), maxExprBytes)}
	}
	var toks []token
	for i := 0; i < len(expr); {
		c := expr[i]
		col := i + 1
		two := ""
		if i+1 < len(expr) {
			two = expr[i : i+2]
		}
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case two == "&&":
			toks, i = append(toks, token{tokAnd, two, col}), i+2
		case two == "||":
			toks, i = append(toks, token{tokOr, two, col}), i+2
		case two == "==" || two == "!=" || two == "<=" || two == ">=":
			toks, i = append(toks, token{tokOp, two, col}), i+2
		case c == '<' || c == '>':
			toks, i = append(toks, token{tokOp, string(c), col}), i+1
		case c == '=':
			return nil, &SyntaxError{expr, col, "'=' alone: compare with =="}
		case c == '!':
			toks, i = append(toks, token{tokNot, "!", col}), i+1
		case c == '(':
			toks, i = append(toks, token{tokLParen, "(", col}), i+1
		case c == ')':
			toks, i = append(toks, token{tokRParen, ")", col}), i+1
		case c == '{':
			toks, i = append(toks, token{tokLBrace, "{", col}), i+1
		case c == '}':
			toks, i = append(toks, token{tokRBrace, "}", col}), i+1
		case c == ',':
			toks, i = append(toks, token{tokComma, ",", col}), i+1
		case c == '"':
			j := i + 1
			var s []byte
			for ; j < len(expr) && expr[j] != '"'; j++ {
				if expr[j] == '\\' && j+1 < len(expr) {
					j++
				}
				s = append(s, expr[j])
			}
			if j >= len(expr) {
				return nil, &SyntaxError{expr, col, "string not closed: a \" is missing"}
			}
			toks, i = append(toks, token{tokString, string(s), col}), j+1
		case isWordByte(c):
			j := i
			for j < len(expr) && isWordByte(expr[j]) {
				j++
			}
			toks, i = append(toks, token{tokWord, expr[i:j], col}), j
		default:
			return nil, &SyntaxError{expr, col, fmt.Sprintf("unexpected %q", string(rune(c)))}
		}
	}
	return append(toks, token{tokEOF, "", len(expr) + 1}), nil
}

// isWordByte: the bytes of names and bare values (addresses, prefixes,
// MACs, hex numbers, opcode names).
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == ':' || c == '/' || c == '-'
}
