" Weft filetype settings.
if exists('b:did_ftplugin')
  finish
endif
let b:did_ftplugin = 1

" Comments are `--` to end of line; `-- |` starts a doc comment.
setlocal commentstring=--\ %s
setlocal comments=:--\ \|,:--
setlocal formatoptions-=t formatoptions+=croql
" Identifiers may contain a prime: x', f''. (39 is the quote character.)
setlocal iskeyword=a-z,A-Z,48-57,_,39
setlocal expandtab shiftwidth=2 softtabstop=2
setlocal suffixesadd=.weft
setlocal include=^\\s*import\\s*\"
setlocal includeexpr=substitute(v:fname,'\"','','g')

let b:undo_ftplugin = 'setlocal commentstring< comments< formatoptions< iskeyword<'
      \ . ' expandtab< shiftwidth< softtabstop< suffixesadd< include< includeexpr<'
