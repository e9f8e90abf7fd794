" APL filetype settings (Weft's APL front end, docs/apl.md).
if exists('b:did_ftplugin')
  finish
endif
let b:did_ftplugin = 1

" Comments are `⍝` to end of line; `⍝ ==` starts a test block, `⍝:` an annotation.
setlocal commentstring=⍝\ %s
setlocal comments=:⍝
setlocal formatoptions-=t formatoptions+=croql
" (∆ ⍙ in names are keyword characters already: Vim counts every character above
" 255 as one.)
setlocal expandtab shiftwidth=2 softtabstop=2

let b:undo_ftplugin = 'setlocal commentstring< comments< formatoptions<'
      \ . ' expandtab< shiftwidth< softtabstop<'
