//! Tests of elaboration and the interpreter.
