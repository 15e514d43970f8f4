package memservice

import (
	"fmt"
	"net/http"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// statusError builds the error the service answers with. Messages are the service's own
// words where they are known.
func statusError(status int, code, msg string) *abstractions.StatusError {
	return &abstractions.StatusError{StatusCode: status, ErrorCode: code, Message: msg}
}

// Table service errors.
func errBadNameLength() error {
	return statusError(http.StatusBadRequest, "OutOfRangeInput",
		"The specified resource name length is not within the permissible limits.")
}

func errBadNameChars() error {
	return statusError(http.StatusBadRequest, "InvalidResourceName",
		"The specified resource name contains invalid characters.")
}

func errTableExists() error {
	return statusError(http.StatusConflict, "TableAlreadyExists", "The table specified already exists.")
}

func errResourceNotFound() error {
	return statusError(http.StatusNotFound, "ResourceNotFound", "The specified resource does not exist.")
}

func errTableNotFound() error {
	return statusError(http.StatusNotFound, "TableNotFound", "The table specified does not exist.")
}

func errEntityExists() error {
	return statusError(http.StatusConflict, "EntityAlreadyExists", "The specified entity already exists.")
}

func errConditionNotSatisfied() error {
	return statusError(http.StatusPreconditionFailed, "UpdateConditionNotSatisfied",
		"The update condition specified in the request was not satisfied.")
}

func errBadETag(etag string) error {
	return statusError(http.StatusBadRequest, "InvalidInput", fmt.Sprintf(
		"The etag value '%s' specified in one of the request headers is not valid. "+
			"Please make sure only one etag value is specified and is valid.", etag))
}

func errInvalidInput(msg string) error {
	return statusError(http.StatusBadRequest, "InvalidInput", msg)
}

func errOutOfRange(param, value string) error {
	return statusError(http.StatusBadRequest, "OutOfRangeInput",
		fmt.Sprintf("The '%s' parameter of value '%s' is out of range.", param, value))
}

func errValueTooLarge() error {
	return statusError(http.StatusBadRequest, "PropertyValueTooLarge",
		"The property value exceeds the maximum allowed size (64KB). If the property value is a "+
			"string, it is UTF-16 encoded and the maximum number of characters should be 32K or less.")
}

func errKeyTooLarge(param string) error {
	return statusError(http.StatusBadRequest, "PropertyValueTooLarge",
		fmt.Sprintf("The '%s' value exceeds the maximum allowed size (1KB).", param))
}

func errNameInvalid(name string) error {
	return statusError(http.StatusBadRequest, "PropertyNameInvalid",
		fmt.Sprintf("The property name '%s' is invalid.", name))
}

func errNameTooLong() error {
	return statusError(http.StatusBadRequest, "PropertyNameTooLong",
		"The property name exceeds the maximum allowed length (255).")
}

func errDuplicateProperty(name string) error {
	return statusError(http.StatusBadRequest, "DuplicatePropertiesSpecified",
		fmt.Sprintf("The property '%s' is specified more than once.", name))
}

func errTooManyProperties() error {
	return statusError(http.StatusBadRequest, "TooManyProperties",
		"The entity contains more properties than allowed. Each entity can include up to 252 "+
			"properties to store data. Each entity also has 3 system properties.")
}

func errEntityTooLarge() error {
	return statusError(http.StatusBadRequest, "EntityTooLarge",
		"The entity is larger than the maximum allowed size (1MB).")
}

func errBodyTooLarge() error {
	return statusError(http.StatusRequestEntityTooLarge, "RequestBodyTooLarge",
		"The request body is too large and exceeds the maximum permissible limit.")
}

// txError names the failing action of a transaction.
func txError(i int, err error) error {
	return &service.TransactionError{Index: i, Err: err}
}

// Blob service errors.
func errContainerName() error {
	return statusError(http.StatusBadRequest, "InvalidResourceName",
		"The specified resource name contains invalid characters.")
}

func errContainerExists() error {
	return statusError(http.StatusConflict, "ContainerAlreadyExists", "The specified container already exists.")
}

func errContainerNotFound() error {
	return statusError(http.StatusNotFound, "ContainerNotFound", "The specified container does not exist.")
}

func errBlobNotFound() error {
	return statusError(http.StatusNotFound, "BlobNotFound", "The specified blob does not exist.")
}

func errBlobExists() error {
	return statusError(http.StatusConflict, "BlobAlreadyExists", "The specified blob already exists.")
}

func errConditionNotMet() error {
	return statusError(http.StatusPreconditionFailed, "ConditionNotMet",
		"The condition specified using HTTP conditional header(s) is not met.")
}

func errInvalidMetadata() error {
	return statusError(http.StatusBadRequest, "InvalidMetadata",
		"The metadata specified is invalid. It has characters that are not permitted.")
}
