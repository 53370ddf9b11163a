package io.ringshift.protocol;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.avro.JsonProperties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaCompatibility.Incompatibility;
import org.apache.avro.SchemaCompatibility.SchemaPairCompatibility;

/**
 * The rules every ringshift schema keeps, as functions that list violations, so that the same code checks the
 * real schemas and proves on deliberately broken ones that it reports them.
 */
final class SchemaRules {
  private SchemaRules() {}

  /**
   * What stops {@code current} and {@code released} from reading each other's data: backward (current reads
   * released) and forward (released reads current). Empty when both directions are compatible.
   */
  static List<String> incompatibilities(Schema current, Schema released) {
    List<String> problems = new ArrayList<>();
    collect("backward (current reads released)", SchemaCompatibility.checkReaderWriterCompatibility(current, released),
        problems);
    collect("forward (released reads current)", SchemaCompatibility.checkReaderWriterCompatibility(released, current),
        problems);
    return problems;
  }

  private static void collect(String direction, SchemaPairCompatibility result, List<String> problems) {
    for (Incompatibility i : result.getResult().getIncompatibilities()) {
      problems.add(direction + ": " + i.getType() + " at " + i.getLocation() + ": " + i.getMessage());
    }
  }

  /**
   * Breaches of the house rules in {@code schema} and every type it contains: every record, enum and field has
   * a doc; every enum has the default symbol UNKNOWN (so a symbol added later reads as UNKNOWN instead of
   * failing); every optional field is {@code ["null", T]} with default null (so adding or removing it stays
   * compatible both ways).
   */
  static List<String> violations(Schema schema) {
    List<String> violations = new ArrayList<>();
    walk(schema, violations, new IdentityHashMap<>());
    return violations;
  }

  private static void walk(Schema schema, List<String> violations, Map<Schema, Boolean> seen) {
    switch (schema.getType()) {
      case RECORD:
        if (seen.put(schema, Boolean.TRUE) != null) {
          return;
        }
        requireDoc(schema.getDoc(), "record " + schema.getFullName(), violations);
        for (Schema.Field field : schema.getFields()) {
          String where = schema.getName() + "." + field.name();
          requireDoc(field.doc(), "field " + where, violations);
          checkOptional(field, where, violations);
          walk(field.schema(), violations, seen);
        }
        break;
      case ENUM:
        if (seen.put(schema, Boolean.TRUE) != null) {
          return;
        }
        requireDoc(schema.getDoc(), "enum " + schema.getFullName(), violations);
        if (!"UNKNOWN".equals(schema.getEnumDefault())) {
          violations.add("enum " + schema.getFullName() + " has default " + schema.getEnumDefault()
              + "; it needs the symbol UNKNOWN as its default so that readers of this version survive a symbol "
              + "added later");
        }
        break;
      case ARRAY:
        walk(schema.getElementType(), violations, seen);
        break;
      case MAP:
        walk(schema.getValueType(), violations, seen);
        break;
      case UNION:
        schema.getTypes().forEach(t -> walk(t, violations, seen));
        break;
      default:
        break;
    }
  }

  private static void checkOptional(Schema.Field field, String where, List<String> violations) {
    Schema type = field.schema();
    if (type.getType() != Schema.Type.UNION) {
      return;
    }
    boolean nullFirst = type.getTypes().get(0).getType() == Schema.Type.NULL;
    boolean nullDefault = field.hasDefaultValue() && Objects.equals(field.defaultVal(), JsonProperties.NULL_VALUE);
    if (type.getTypes().size() != 2 || !nullFirst || !nullDefault) {
      violations.add("field " + where + " is " + type + (field.hasDefaultValue() ? " with default "
          + field.defaultVal() : " without a default") + "; an optional field must be [\"null\", T] with default "
          + "null");
    }
  }

  private static void requireDoc(String doc, String what, List<String> violations) {
    if (doc == null || doc.isBlank()) {
      violations.add(what + " has no doc");
    }
  }
}
