" Vim syntax file
" Language: APL (the subset of Weft's APL front end, docs/apl.md)
" Filenames: *.apl

if exists('b:current_syntax')
  finish
endif

syn match aplComment   "⍝.*$" contains=aplTestBlock
syn match aplTestBlock "⍝\s*\(==\|output\|error:\)" contained
syn match aplNumber    "⍬\|¯\?\d\+\(\.\d*\)\?\([eE]¯\?\d\+\)\?"
syn region aplString   start="'" skip="''" end="'" oneline
syn match aplArgument  "⍺⍺\|⍵⍵\|⍺\|⍵"
syn match aplAssign    "←"
syn match aplQuad      "⎕"
syn match aplOperator  "[/\\⌿⍀¨⍨∘.⍣]"
syn match aplFunction  "[-+×÷⌈⌊|*⍟○!<≤=≥>≠∧∨⍲⍱~⍴⍳,⍪⌽⊖⍉↑↓⊃≢⊣⊢∊]"
syn match aplDfn       "[{}]"
syn match aplSeparator "[⋄;:]"

hi def link aplComment   Comment
hi def link aplTestBlock Special
hi def link aplNumber    Number
hi def link aplString    String
hi def link aplArgument  Identifier
hi def link aplAssign    Statement
hi def link aplQuad      PreProc
hi def link aplOperator  Operator
hi def link aplFunction  Function
hi def link aplDfn       Delimiter
hi def link aplSeparator Delimiter

let b:current_syntax = 'apl'
