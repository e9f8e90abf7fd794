⍝ T23: ⍳ of a negative count (known only at run time) is an error.
⍳ -/ 1 4
⍝ ==
⍝ error: negative
