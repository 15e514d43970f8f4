package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

func statusError(status int, code, msg string) *abstractions.StatusError {
	return &abstractions.StatusError{StatusCode: status, ErrorCode: code, Message: msg}
}

// errNotImplemented refuses what the emulator does not implement, in the service's words
// followed by what was asked.
func errNotImplemented(what string) error {
	return statusError(http.StatusNotImplemented, "NotImplemented",
		"The requested operation is not implemented on the specified resource. (The emulator does not support "+what+".)")
}

func errAtom() error {
	return statusError(http.StatusUnsupportedMediaType, "AtomFormatNotSupported", "Atom format is not supported.")
}

func errInvalidInput(msg string) error {
	return statusError(http.StatusBadRequest, "InvalidInput", msg)
}

// errBadInput is the service's answer to a body or value it cannot read.
func errBadInput() error { return errInvalidInput("One of the request inputs is not valid.") }

func errBodyTooLarge() error {
	return statusError(http.StatusRequestEntityTooLarge, "RequestBodyTooLarge",
		"The request body is too large and exceeds the maximum permissible limit.")
}

func errAuthentication() error {
	return statusError(http.StatusForbidden, "AuthenticationFailed",
		"Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.")
}

func errMissingHeader(name string) error {
	return statusError(http.StatusBadRequest, "MissingRequiredHeader",
		"An HTTP header that's mandatory for this request is not specified. (Header: "+name+".)")
}

func errInvalidURI() error {
	return statusError(http.StatusBadRequest, "InvalidUri", "The requested URI does not represent any resource on the server.")
}

func errBadQueryValue(name string) error {
	return statusError(http.StatusBadRequest, "InvalidQueryParameterValue",
		"Value for one of the query parameters specified in the request URI is invalid. (Parameter: "+name+".)")
}

// asStatus returns err as the service's error. An error the memory service did not shape
// (a canceled request) is a 500.
func asStatus(err error) *abstractions.StatusError {
	var se *abstractions.StatusError
	if errors.As(err, &se) {
		return se
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return statusError(http.StatusServiceUnavailable, "OperationTimedOut", "The operation could not be completed within the permitted time.")
	}
	return statusError(http.StatusInternalServerError, "InternalError", "The server encountered an internal error. Please retry the request.")
}

// errorBody is the JSON error body of the service: the code, and the message followed by
// the request id and time lines the service appends. prefix goes before the message (the
// "N:" of a failed transaction action).
func (q *request) errorBody(se *abstractions.StatusError, prefix string) []byte {
	type message struct {
		Lang  string `json:"lang"`
		Value string `json:"value"`
	}
	type odataError struct {
		Code    string  `json:"code"`
		Message message `json:"message"`
	}
	msg := prefix + se.Message + "\nRequestId:" + q.id + "\nTime:" + service.FormatDateTime(q.start)
	b, _ := json.Marshal(map[string]odataError{"odata.error": {Code: se.ErrorCode, Message: message{"en-US", msg}}})
	return b
}

// fail answers the request with err.
func (q *request) fail(err error) {
	se := asStatus(err)
	body := q.errorBody(se, "")
	hdr := q.w.Header()
	hdr.Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
	hdr.Set("x-ms-error-code", se.ErrorCode)
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	q.w.WriteHeader(se.StatusCode)
	_, _ = q.w.Write(body)
}
