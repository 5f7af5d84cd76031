// tierbench console
