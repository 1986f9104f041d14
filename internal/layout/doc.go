// Package layout holds no code: its tests enforce the rules of the house,
// the direction of the dependencies between rshub's packages and the
// README's package table.
package layout
