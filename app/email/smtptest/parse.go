package smtptest

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
)

// Parsed is a received message as a mail client shows it.
type Parsed struct {
	Header      mail.Header
	Subject     string // decoded
	ContentType string // of the whole message, without parameters
	Text        string // the text/plain part, transfer-decoded
	HTML        string // the text/html part, transfer-decoded
}

// Parse reads a message with net/mail and mime/multipart (which undoes
// quoted-printable), expecting multipart/alternative or a single part.
func Parse(data []byte) (*Parsed, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("read message: %w", err)
	}
	p := &Parsed{Header: msg.Header}
	if p.Subject, err = new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject")); err != nil {
		return nil, fmt.Errorf("decode subject: %w", err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return nil, fmt.Errorf("content type: %w", err)
	}
	p.ContentType = mt
	if !strings.HasPrefix(mt, "multipart/") {
		body, err := io.ReadAll(msg.Body)
		if err != nil {
			return nil, fmt.Errorf("read body: %w", err)
		}
		p.set(mt, string(body))
		return p, nil
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := r.NextPart()
		if err == io.EOF {
			return p, nil
		}
		if err != nil {
			return nil, fmt.Errorf("next part: %w", err)
		}
		pt, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type"))
		body, err := io.ReadAll(part)
		if err != nil {
			return nil, fmt.Errorf("read %s part: %w", pt, err)
		}
		p.set(pt, string(body))
	}
}

func (p *Parsed) set(mediaType, body string) {
	switch mediaType {
	case "text/plain":
		p.Text = body
	case "text/html":
		p.HTML = body
	}
}
