"""Generic engines that read a format declaration: lexer, parse machine, writer, fold."""
